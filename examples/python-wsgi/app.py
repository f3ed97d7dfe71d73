"""A WSGI site whose /checkout/ needs an Anteroom pass.

Passes are checked offline with PyJWT against Anteroom's JWKS (PyJWKClient caches the
keys and fetches again for an unknown `kid`): no call to Anteroom per request.
See docs/integrations.md.

    pip install -r requirements.txt
    ANTEROOM=https://queue.example.com ROOM=sale PORT=3001 python3 app.py
"""

import os
import time
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, quote, urlencode
from wsgiref.simple_server import WSGIRequestHandler, make_server

import jwt

ANTEROOM = os.environ.get("ANTEROOM", "http://127.0.0.1:8080").rstrip("/")
ROOM = os.environ.get("ROOM", "sale")
PORT = int(os.environ.get("PORT", "3001"))

jwks = jwt.PyJWKClient(f"{ANTEROOM}/.well-known/jwks.json")


def verify_pass(token, room):
    """The pass's claims, or None for a missing, forged, expired or other room's pass."""
    if not token:
        return None
    try:
        key = jwks.get_signing_key_from_jwt(token)
        claims = jwt.decode(
            token,
            key.key,
            algorithms=["EdDSA"],
            issuer="anteroom",
            options={"require": ["exp", "iss", "sub"]},
        )
    except jwt.PyJWTError:
        return None
    return claims if claims.get("room") == room else None


def require_pass(room, view):
    """Wraps a WSGI app: pass holders get through (environ["anteroom"] = claims),
    everyone else goes to the room's queue page with ?return= set."""
    cookie_name = f"anteroom_pass_{room}"

    def app(environ, start_response):
        query = parse_qs(environ.get("QUERY_STRING", ""))
        from_query = query.get("anteroom_pass", [None])[0]
        cookies = SimpleCookie(environ.get("HTTP_COOKIE", ""))
        token = from_query or (cookies[cookie_name].value if cookie_name in cookies else None)
        claims = verify_pass(token, room)
        path = environ.get("PATH_INFO", "/")
        host = environ.get("HTTP_HOST", "localhost")
        scheme = environ.get("wsgi.url_scheme", "http")
        if claims is None:
            here = f"{scheme}://{host}{path}"
            if environ.get("QUERY_STRING"):
                here += "?" + environ["QUERY_STRING"]
            start_response("302 Found", [("Location", f"{ANTEROOM}/r/{room}?return={quote(here, safe='')}")])
            return [b""]
        if from_query:
            # Keep the pass in our own cookie and drop it from the address bar.
            rest = {k: v for k, v in query.items() if k != "anteroom_pass"}
            location = path + ("?" + urlencode(rest, doseq=True) if rest else "")
            max_age = max(0, int(claims["exp"] - time.time()))
            secure = "; Secure" if scheme == "https" else ""
            start_response("302 Found", [
                ("Location", location),
                ("Set-Cookie", f"{cookie_name}={from_query}; Max-Age={max_age}; Path=/; HttpOnly; SameSite=Lax{secure}"),
            ])
            return [b""]
        environ["anteroom"] = claims
        return view(environ, start_response)

    return app


def checkout(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain; charset=utf-8")])
    return [f"checkout for visitor {environ['anteroom']['sub']}".encode()]


def site(environ, start_response):
    if environ.get("PATH_INFO", "/").startswith("/checkout/"):
        return protected(environ, start_response)
    start_response("200 OK", [("Content-Type", "text/plain; charset=utf-8")])
    return [b"home: open to everyone"]


protected = require_pass(ROOM, checkout)


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


if __name__ == "__main__":
    with make_server("127.0.0.1", PORT, site, handler_class=QuietHandler) as server:
        print(f"listening on {PORT}", flush=True)
        server.serve_forever()
