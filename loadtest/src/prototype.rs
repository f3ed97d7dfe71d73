//! `anteroom-loadtest prototype-server`: the in-process single-node prototype that issue 35
//! item 3 measures the memory store against (our own rendering of that kind of design:
//! its source is not public). One actix-web worker, one line behind one mutex: a
//! `BTreeMap` from ticket to visitor and a `HashMap` from visitor to ticket; the first
//! `capacity` visitors are let in, the rest queue. Nothing else: no signature (the token
//! is the bare visitor id), no heartbeat, no ETA, no sessions that end, no second
//! instance. Nobody leaves its line (no release, no reaper), so a visitor's position is
//! its ticket, read in O(1): the fastest such a prototype can be, the bar at its highest.
//! (With leaving, the `BTreeMap` would give the rank by counting the tickets ahead.)
//!
//! It speaks the two routes `anteroom-loadtest http` drives, with Anteroom's names:
//! `POST /api/rooms/{room}/join` → `{"visitor_token", "state", "position"}` and
//! `GET /api/rooms/{room}/status` with `Authorization: Bearer <visitor_token>`.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use rand::Rng;

#[derive(Default)]
struct Line {
    next_ticket: u64,
    admitted: u64,
    by_ticket: BTreeMap<u64, String>,
    tickets: HashMap<String, u64>,
}

struct Prototype {
    capacity: u64,
    line: Mutex<Line>,
}

impl Prototype {
    /// Joins a new visitor: their id and where they stand (0: let in).
    fn join(&self) -> (String, u64) {
        let mut id = [0u8; 16];
        rand::thread_rng().fill(&mut id);
        let id: String = id.iter().map(|b| format!("{b:02x}")).collect();
        // unwrap: never poisoned (no panics while held).
        let mut l = self.line.lock().unwrap();
        if l.admitted < self.capacity {
            l.admitted += 1;
            l.tickets.insert(id.clone(), 0);
            return (id, 0);
        }
        l.next_ticket += 1;
        let t = l.next_ticket;
        l.by_ticket.insert(t, id.clone());
        l.tickets.insert(id.clone(), t);
        (id, t)
    }

    /// Where `id` stands: `None` unknown, `Some(0)` let in, else its position.
    fn status(&self, id: &str) -> Option<u64> {
        let l = self.line.lock().unwrap();
        l.tickets.get(id).copied()
    }
}

fn answer(id: Option<&str>, ticket: u64) -> HttpResponse {
    let state = if ticket == 0 { "admitted" } else { "queued" };
    let mut v = serde_json::json!({ "state": state, "position": ticket });
    if let Some(id) = id {
        v["visitor_token"] = id.into();
    }
    HttpResponse::Ok().json(v)
}

async fn join(p: web::Data<Prototype>) -> HttpResponse {
    let (id, ticket) = p.join();
    answer(Some(&id), ticket)
}

async fn status(p: web::Data<Prototype>, req: HttpRequest) -> HttpResponse {
    let token = req
        .headers()
        .get("authorization")
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "));
    match token.and_then(|t| p.status(t)) {
        Some(ticket) => answer(None, ticket),
        None => HttpResponse::NotFound().json(serde_json::json!({ "error": "not_queued" })),
    }
}

/// Serves the prototype on `listen` (one worker) until killed.
pub fn serve(listen: &str, capacity: u64) -> Result<(), String> {
    let p = web::Data::new(Prototype {
        capacity,
        line: Mutex::new(Line::default()),
    });
    let listen = listen.to_string();
    actix_web::rt::System::new()
        .block_on(async move {
            HttpServer::new(move || {
                App::new()
                    .app_data(p.clone())
                    .route("/api/rooms/{room}/join", web::post().to(join))
                    .route("/api/rooms/{room}/status", web::get().to(status))
                    .route("/", web::get().to(|| async { "ok" }))
            })
            .workers(1)
            .bind(&listen)?
            .run()
            .await
        })
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_capacity_visitors_are_let_in_and_the_rest_queue_in_turn() {
        let p = Prototype {
            capacity: 2,
            line: Mutex::new(Line::default()),
        };
        let joined: Vec<_> = (0..4).map(|_| p.join()).collect();
        let at: Vec<u64> = joined.iter().map(|(_, t)| *t).collect();
        assert_eq!(at, vec![0, 0, 1, 2]);
        assert_eq!(p.status(&joined[3].0), Some(2));
        assert_eq!(p.status("nobody"), None);
    }
}
