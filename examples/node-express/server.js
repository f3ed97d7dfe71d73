// An Express site whose /checkout/ needs an Anteroom pass. Passes are checked offline
// with jose against Anteroom's JWKS (fetched once, refreshed when an unknown key shows
// up): no call to Anteroom per request. See docs/integrations.md.
//
//   ANTEROOM=https://queue.example.com ROOM=sale PORT=3000 node server.js
import express from "express";
import { createRemoteJWKSet, jwtVerify } from "jose";

const ANTEROOM = (process.env.ANTEROOM ?? "http://127.0.0.1:8080").replace(/\/$/, "");
const ROOM = process.env.ROOM ?? "sale";
const PORT = Number(process.env.PORT ?? 3000);

const jwks = createRemoteJWKSet(new URL(`${ANTEROOM}/.well-known/jwks.json`));
const cookieName = (room) => `anteroom_pass_${room}`;

function cookieOf(req, name) {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return undefined;
}

// The pass's claims ({ iss, room, sub, iat, exp, jti }), or null for a missing, forged,
// expired or other room's pass.
export async function verifyPass(token, room) {
  if (!token) return null;
  try {
    const { payload } = await jwtVerify(token, jwks, {
      issuer: "anteroom",
      algorithms: ["EdDSA"],
      requiredClaims: ["exp", "sub", "room"],
    });
    return payload.room === room ? payload : null;
  } catch {
    return null;
  }
}

// Middleware: lets pass holders through (req.anteroom = claims), sends everyone else to
// the room's queue page with ?return= set to where they were going.
export function requirePass(room) {
  return async (req, res, next) => {
    // Coming back from the queue on another host: the pass is in the query string once.
    const fromQuery = typeof req.query.anteroom_pass === "string" ? req.query.anteroom_pass : undefined;
    const claims = await verifyPass(fromQuery ?? cookieOf(req, cookieName(room)), room);
    const here = `${req.protocol}://${req.get("host")}${req.originalUrl}`;
    if (!claims) {
      return res.redirect(302, `${ANTEROOM}/r/${room}?return=${encodeURIComponent(here)}`);
    }
    if (fromQuery) {
      // Keep the pass in our own cookie and drop it from the address bar.
      const url = new URL(here);
      url.searchParams.delete("anteroom_pass");
      res.cookie(cookieName(room), fromQuery, {
        httpOnly: true,
        sameSite: "lax",
        secure: req.secure,
        maxAge: Math.max(0, claims.exp * 1000 - Date.now()),
      });
      return res.redirect(302, url.pathname + url.search);
    }
    req.anteroom = claims;
    next();
  };
}

const app = express();
app.get("/", (_req, res) => res.send("home: open to everyone"));
app.use("/checkout", requirePass(ROOM));
app.get("/checkout/", (req, res) => res.send(`checkout for visitor ${req.anteroom.sub}`));

app.listen(PORT, "127.0.0.1", () => console.log(`listening on ${PORT}`));
