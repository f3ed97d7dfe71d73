//! Requests written byte for byte on a TCP connection. HTTP clients normalise what they
//! send (`reqwest` resolves `..`, turns `\` into `/`, drops a trailing dot of the host),
//! so the hostile forms that a hand-made request carries are sent this way.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What came back.
#[derive(Debug)]
pub struct RawReply {
    pub status: u16,
    /// Lowercase names.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl RawReply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// `GET target HTTP/1.1` to `127.0.0.1:port` with `Host: host` (none when `None`) and
/// `extra` headers, `Connection: close`; the answer read to the end (10 s at most).
pub async fn get(port: u16, target: &str, host: Option<&str>, extra: &[(&str, &str)]) -> RawReply {
    let mut head = format!("GET {target} HTTP/1.1\r\n");
    if let Some(h) = host {
        head.push_str(&format!("Host: {h}\r\n"));
    }
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("Connection: close\r\n\r\n");
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw))
        .await
        .expect("an answer within 10 s")
        .expect("read");
    parse(&raw).unwrap_or_else(|| panic!("not HTTP: {:?}", String::from_utf8_lossy(&raw)))
}

fn parse(raw: &[u8]) -> Option<RawReply> {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    if chunked {
        body = dechunk(&body)?;
    }
    Some(RawReply {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = rest.windows(2).position(|w| w == b"\r\n")?;
        let size_text = String::from_utf8_lossy(&rest[..eol]);
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        rest = &rest[eol + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(rest.get(..size)?);
        rest = rest.get(size + 2..)?;
    }
}
