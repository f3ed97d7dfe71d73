//! The gateway's plain HTTP/1.1 connections across the idle handover (`src/gateway/idle.rs`):
//! after `HANDOVER_AFTER` (200 ms) idle, hyper's connection is ended and only the socket
//! kept until the client sends again. Nothing of this may show to a client: keep-alive,
//! pipelining (also a request cut in two around the handover), bodies sent after a pause,
//! a WebSocket upgrade on a connection that has been idle, the idle timeout and the
//! shutdown, all on a raw socket so that each byte's timing is the test's.

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

use crate::helpers::upstream::Upstream;
use crate::helpers::{free_port, prefix, spawn_app, test_settings, RedisServer, TestApp};

/// Longer than the handover delay (200 ms): a pause after which the connection has been
/// handed over to the bare socket.
const PAUSE: Duration = Duration::from_millis(700);

struct Gw {
    app: TestApp,
    port: u16,
    _up: Upstream,
    _redis: RedisServer,
}

/// An instance whose gateway (no routes: everything proxied) fronts the test origin.
async fn gateway(header_read_timeout_ms: u64) -> Gw {
    let redis = RedisServer::start();
    let up = Upstream::start().await;
    let port = free_port();
    let mut s = test_settings(Some(redis.url()), &prefix(), vec![]);
    s.gateway.listen = Some(format!("127.0.0.1:{port}"));
    s.gateway.upstream = Some(up.url());
    s.gateway.header_read_timeout_ms = header_read_timeout_ms;
    let app = spawn_app(s).await;
    Gw {
        app,
        port,
        _up: up,
        _redis: redis,
    }
}

fn get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: shop.test\r\n\r\n")
}

/// Reads one response (with a `Content-Length`) from `sock`; `buf` keeps what follows it.
async fn response(sock: &mut TcpStream, buf: &mut Vec<u8>) -> (u16, Vec<u8>) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_string();
            let status: u16 = head[9..12].parse().unwrap();
            let len: usize = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse().unwrap())
                })
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                let body = buf[end + 4..end + 4 + len].to_vec();
                buf.drain(..end + 4 + len);
                return (status, body);
            }
        }
        let mut chunk = [0u8; 16384];
        let n = tokio::time::timeout_at(deadline, sock.read(&mut chunk))
            .await
            .expect("a response within 10 s")
            .unwrap();
        assert!(
            n > 0,
            "the connection closed before a whole response: {:?}",
            String::from_utf8_lossy(buf)
        );
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The path the origin saw (it echoes requests as JSON).
fn echoed_path(body: &[u8]) -> String {
    let v: Value = serde_json::from_slice(body).unwrap();
    v["path"].as_str().unwrap().to_string()
}

/// Waits until the gateway closes `sock` (a read of 0 bytes), within `within`; returns when.
async fn closed_within(sock: &mut TcpStream, within: Duration) -> Duration {
    let start = Instant::now();
    let mut chunk = [0u8; 1024];
    match tokio::time::timeout(within, sock.read(&mut chunk)).await {
        Ok(Ok(0)) | Ok(Err(_)) => start.elapsed(),
        Ok(Ok(n)) => panic!(
            "unexpected bytes: {:?}",
            String::from_utf8_lossy(&chunk[..n])
        ),
        Err(_) => panic!("the connection was still open after {within:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alive_lasts_across_idle_pauses() {
    let g = gateway(10_000).await;
    let mut sock = TcpStream::connect(("127.0.0.1", g.port)).await.unwrap();
    let mut buf = Vec::new();
    for i in 0..4 {
        sock.write_all(get(&format!("/k{i}")).as_bytes())
            .await
            .unwrap();
        let (status, body) = response(&mut sock, &mut buf).await;
        assert_eq!((status, echoed_path(&body)), (200, format!("/k{i}")));
        tokio::time::sleep(PAUSE).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_requests_are_answered_in_order_even_one_cut_across_the_handover() {
    let g = gateway(10_000).await;
    let mut sock = TcpStream::connect(("127.0.0.1", g.port)).await.unwrap();
    let mut buf = Vec::new();
    // Three at once.
    let three = format!("{}{}{}", get("/p1"), get("/p2"), get("/p3"));
    sock.write_all(three.as_bytes()).await.unwrap();
    for p in ["/p1", "/p2", "/p3"] {
        let (status, body) = response(&mut sock, &mut buf).await;
        assert_eq!((status, echoed_path(&body)), (200, p.to_string()));
    }
    // One whole and the start of the next, then a pause past the handover with that
    // start held by the gateway, then the rest.
    let next = get("/p5");
    let (start, rest) = next.split_at(12);
    sock.write_all(format!("{}{start}", get("/p4")).as_bytes())
        .await
        .unwrap();
    let (status, body) = response(&mut sock, &mut buf).await;
    assert_eq!((status, echoed_path(&body)), (200, "/p4".to_string()));
    tokio::time::sleep(PAUSE).await;
    sock.write_all(rest.as_bytes()).await.unwrap();
    let (status, body) = response(&mut sock, &mut buf).await;
    assert_eq!((status, echoed_path(&body)), (200, "/p5".to_string()));
    // A head cut in two after an idle pause.
    tokio::time::sleep(PAUSE).await;
    let next = get("/p6");
    let (start, rest) = next.split_at(20);
    sock.write_all(start.as_bytes()).await.unwrap();
    tokio::time::sleep(PAUSE).await;
    sock.write_all(rest.as_bytes()).await.unwrap();
    let (status, body) = response(&mut sock, &mut buf).await;
    assert_eq!((status, echoed_path(&body)), (200, "/p6".to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_sent_after_a_pause_arrives_whole() {
    let g = gateway(10_000).await;
    let mut sock = TcpStream::connect(("127.0.0.1", g.port)).await.unwrap();
    let mut buf = Vec::new();
    sock.write_all(get("/first").as_bytes()).await.unwrap();
    response(&mut sock, &mut buf).await;
    tokio::time::sleep(PAUSE).await;
    let body = b"0123456789abcdefghij";
    sock.write_all(
        format!(
            "POST /upload HTTP/1.1\r\nHost: shop.test\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    tokio::time::sleep(PAUSE).await;
    sock.write_all(&body[..7]).await.unwrap();
    tokio::time::sleep(PAUSE).await;
    sock.write_all(&body[7..]).await.unwrap();
    let (status, answer) = response(&mut sock, &mut buf).await;
    assert_eq!(status, 200);
    let v: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(v["len"], body.len());
    // And the connection is still good for another request.
    sock.write_all(get("/after").as_bytes()).await.unwrap();
    let (status, answer) = response(&mut sock, &mut buf).await;
    assert_eq!((status, echoed_path(&answer)), (200, "/after".to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_upgrades_a_connection_that_was_idle() {
    let g = gateway(10_000).await;
    let mut sock = TcpStream::connect(("127.0.0.1", g.port)).await.unwrap();
    let mut buf = Vec::new();
    sock.write_all(get("/before").as_bytes()).await.unwrap();
    response(&mut sock, &mut buf).await;
    tokio::time::sleep(PAUSE).await;
    let url = format!("ws://127.0.0.1:{}/ws", g.port);
    let (mut ws, res) = tokio_tungstenite::client_async(url, sock).await.unwrap();
    assert_eq!(res.status(), 101);
    for text in ["one", "two after a pause"] {
        ws.send(Message::text(text)).await.unwrap();
        let m = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .unwrap();
        assert_eq!(m.unwrap().unwrap(), Message::text(text));
        tokio::time::sleep(PAUSE).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_connection_is_closed_after_the_header_read_timeout() {
    let g = gateway(1_500).await;
    // One that never sends anything.
    let mut silent = TcpStream::connect(("127.0.0.1", g.port)).await.unwrap();
    // One idle after a request.
    let mut sock = TcpStream::connect(("127.0.0.1", g.port)).await.unwrap();
    let mut buf = Vec::new();
    sock.write_all(get("/x").as_bytes()).await.unwrap();
    response(&mut sock, &mut buf).await;
    let after_request = closed_within(&mut sock, Duration::from_secs(5)).await;
    assert!(
        after_request >= Duration::from_millis(1_000),
        "closed after {after_request:?}, before the 1.5 s timeout"
    );
    closed_within(&mut silent, Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_closes_idle_connections_at_once() {
    let g = gateway(30_000).await;
    let mut handed_over = TcpStream::connect(("127.0.0.1", g.port)).await.unwrap();
    let mut fresh = TcpStream::connect(("127.0.0.1", g.port)).await.unwrap();
    let mut buf = Vec::new();
    handed_over.write_all(get("/x").as_bytes()).await.unwrap();
    response(&mut handed_over, &mut buf).await;
    fresh.write_all(get("/y").as_bytes()).await.unwrap();
    response(&mut fresh, &mut buf).await;
    tokio::time::sleep(PAUSE).await;
    // `fresh` is idle within hyper (under the handover delay), `handed_over` on the bare
    // socket.
    fresh.write_all(get("/z").as_bytes()).await.unwrap();
    response(&mut fresh, &mut buf).await;
    g.app.shutdown.cancel();
    closed_within(&mut handed_over, Duration::from_secs(3)).await;
    closed_within(&mut fresh, Duration::from_secs(3)).await;
}

/// Reads from `sock` into `buf` until `want` is in it; panics on the connection closing
/// first or after 10 s.
async fn read_until(sock: &mut TcpStream, buf: &mut Vec<u8>, want: &[u8]) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !buf.windows(want.len()).any(|w| w == want) {
        let mut chunk = [0u8; 4096];
        let n = tokio::time::timeout_at(deadline, sock.read(&mut chunk))
            .await
            .unwrap_or_else(|_| panic!("{:?} within 10 s", String::from_utf8_lossy(want)))
            .unwrap_or(0);
        assert!(
            n > 0,
            "the connection closed before {:?}: {:?}",
            String::from_utf8_lossy(want),
            String::from_utf8_lossy(buf)
        );
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// A request in flight when the instance stops is answered whole before its connection
/// closes (the gateway's runtime is not dropped under it); new connections are refused
/// at once, and a WebSocket tunnel closes at once (it would hold the stop for the whole
/// grace).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_a_request_in_flight_finish() {
    let g = gateway(30_000).await;
    let url = format!("ws://127.0.0.1:{}/ws", g.port);
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    ws.send(Message::text("up")).await.unwrap();
    let m = tokio::time::timeout(Duration::from_secs(5), ws.next()).await;
    assert_eq!(m.unwrap().unwrap().unwrap(), Message::text("up"));
    let mut sock = TcpStream::connect(("127.0.0.1", g.port)).await.unwrap();
    sock.write_all(get("/gated").as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    // Its first part has come through: the response is in flight.
    read_until(&mut sock, &mut buf, b"first").await;
    g.app.shutdown.cancel();
    // The tunnel ends (closed, or a close frame) within 3 s.
    let ended = tokio::time::timeout(Duration::from_secs(3), async {
        loop {
            match ws.next().await {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => break,
                Some(Ok(_)) => {}
            }
        }
    })
    .await;
    assert!(
        ended.is_ok(),
        "the tunnel was still open 3 s after the stop"
    );
    crate::helpers::wait_until(
        Duration::from_secs(10),
        "the gateway to refuse new connections",
        || async {
            TcpStream::connect(("127.0.0.1", g.port))
                .await
                .is_err()
                .then_some(())
        },
    )
    .await;
    g._up.open_gate();
    read_until(&mut sock, &mut buf, b"second").await;
    // The chunked body's end, then the connection closes.
    read_until(&mut sock, &mut buf, b"0\r\n\r\n").await;
    closed_within(&mut sock, Duration::from_secs(3)).await;
}
