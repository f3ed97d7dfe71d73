//! `MONITOR` on a test's Redis: every command it runs, in the order it ran them, each
//! script's or function's own commands (`[0 lua]`) right after the call that ran them. A
//! window between two `ECHO` markers sent by the test holds exactly what Redis ran while
//! the test's code ran, so each call can be put down to the code that made it by its name
//! (the budget test, `tests/it/budget.rs`, uses it: `INFO commandstats` cannot tell a
//! hub tick from a join).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::RedisServer;

/// One call a client made, with the commands a script or function ran inside it.
#[derive(Debug, Clone)]
pub struct Call {
    /// The command and its arguments as sent.
    pub args: Vec<Vec<u8>>,
    /// The commands run inside it (names, upper case), for `FCALL`/`EVALSHA`/`EVAL`.
    pub inner: Vec<String>,
}

impl Call {
    /// The command's name, upper case.
    pub fn command(&self) -> String {
        String::from_utf8_lossy(&self.args[0]).to_ascii_uppercase()
    }

    /// The `n`th argument as text.
    pub fn arg(&self, n: usize) -> String {
        self.args
            .get(n)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .unwrap_or_default()
    }

    /// Bytes the client wrote for it: the RESP array of bulk strings clients send.
    pub fn request_bytes(&self) -> u64 {
        let head = format!("*{}\r\n", self.args.len()).len();
        let args: usize = self
            .args
            .iter()
            .map(|a| format!("${}\r\n", a.len()).len() + a.len() + 2)
            .sum();
        (head + args) as u64
    }
}

/// A `MONITOR` connection read by a thread; dropped with the test.
pub struct Monitor {
    lines: Arc<Mutex<Vec<String>>>,
    stream: TcpStream,
    marker: redis::Connection,
    windows: u64,
}

impl Monitor {
    pub fn start(redis: &RedisServer) -> Self {
        let addr = redis.url().trim_start_matches("redis://").to_string();
        let mut stream = TcpStream::connect(&addr).unwrap();
        stream.write_all(b"MONITOR\r\n").unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut first = String::new();
        reader.read_line(&mut first).unwrap();
        assert_eq!(first.trim_end(), "+OK", "MONITOR accepted");
        std::thread::spawn({
            let lines = lines.clone();
            move || {
                for line in reader.lines() {
                    let Ok(line) = line else { break };
                    lines.lock().unwrap().push(line);
                }
            }
        });
        Self {
            lines,
            stream,
            marker: redis.conn(),
            windows: 0,
        }
    }

    /// What Redis ran while `f` ran: every call between a marker sent before and one
    /// sent after it.
    pub async fn window<T>(&mut self, f: impl std::future::Future<Output = T>) -> (T, Vec<Call>) {
        self.windows += 1;
        let start = format!("budget-window-{}-start", self.windows);
        let end = format!("budget-window-{}-end", self.windows);
        self.echo(&start);
        let out = f.await;
        self.echo(&end);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            {
                let mut lines = self.lines.lock().unwrap();
                let marker = |m: &str| {
                    let m = format!("\"{m}\"");
                    lines.iter().position(|l| l.ends_with(&m))
                };
                if let (Some(s), Some(e)) = (marker(&start), marker(&end)) {
                    let calls = group(&lines[s + 1..e]);
                    lines.drain(..=e);
                    return (out, calls);
                }
            }
            assert!(Instant::now() < deadline, "MONITOR never showed {end}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn echo(&mut self, text: &str) {
        let _: String = redis::cmd("ECHO")
            .arg(text)
            .query(&mut self.marker)
            .unwrap();
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

/// Groups monitor lines into calls: a client's command, then the `lua` lines it ran.
fn group(lines: &[String]) -> Vec<Call> {
    let mut calls: Vec<Call> = Vec::new();
    for line in lines {
        let Some((source, args)) = parse_line(line) else {
            continue;
        };
        if source == "lua" {
            let name = String::from_utf8_lossy(&args[0]).to_ascii_uppercase();
            calls
                .last_mut()
                .expect("a script's command follows its call")
                .inner
                .push(name);
        } else {
            calls.push(Call {
                args,
                inner: Vec::new(),
            });
        }
    }
    calls
}

/// `+1700000000.123456 [0 127.0.0.1:5000] "FCALL" "join" …` into (`127.0.0.1:5000` or
/// `lua`, the arguments unescaped).
fn parse_line(line: &str) -> Option<(String, Vec<Vec<u8>>)> {
    let open = line.find('[')?;
    let close = open + line[open..].find(']')?;
    let source = line[open + 1..close].split_once(' ')?.1.to_string();
    let mut args = Vec::new();
    let mut rest = &line.as_bytes()[close + 1..];
    while let Some(start) = rest.iter().position(|&b| b == b'"') {
        let mut arg = Vec::new();
        let mut i = start + 1;
        while rest[i] != b'"' {
            if rest[i] == b'\\' {
                i += 1;
                match rest[i] {
                    b'n' => arg.push(b'\n'),
                    b'r' => arg.push(b'\r'),
                    b't' => arg.push(b'\t'),
                    b'a' => arg.push(7),
                    b'b' => arg.push(8),
                    b'x' => {
                        let hex = std::str::from_utf8(&rest[i + 1..i + 3]).ok()?;
                        arg.push(u8::from_str_radix(hex, 16).ok()?);
                        i += 2;
                    }
                    other => arg.push(other),
                }
            } else {
                arg.push(rest[i]);
            }
            i += 1;
        }
        args.push(arg);
        rest = &rest[i + 1..];
    }
    (!args.is_empty()).then_some((source, args))
}
