//! RSS and CPU time of processes, from `/proc` (Linux).

use serde::Serialize;

/// One reading of a process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ProcSample {
    pub rss_bytes: u64,
    /// User + system CPU time, in clock ticks.
    pub cpu_ticks: u64,
}

/// Clock ticks per second for `/proc/<pid>/stat` (USER_HZ; 100 on Linux).
pub const TICKS_PER_SEC: f64 = 100.0;

pub fn sample(pid: u32) -> Option<ProcSample> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    Some(ProcSample {
        rss_bytes: parse_rss(&status)?,
        cpu_ticks: parse_cpu(&stat)?,
    })
}

/// `VmRSS:   12345 kB` → bytes.
pub fn parse_rss(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|kb| kb.parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// utime + stime (fields 14 and 15), counted after the `(comm)` field, which may
/// contain spaces.
pub fn parse_cpu(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state); utime is field 14 → index 11.
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// CPU use between two samples over `secs` seconds, as a percentage of one core.
pub fn cpu_percent(a: ProcSample, b: ProcSample, secs: f64) -> f64 {
    if secs <= 0.0 {
        return 0.0;
    }
    (b.cpu_ticks.saturating_sub(a.cpu_ticks) as f64 / TICKS_PER_SEC) / secs * 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_files() {
        let stat = "1234 (my (odd) name) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 4 0";
        assert_eq!(parse_cpu(stat), Some(300));
        assert_eq!(
            parse_rss("Name: x\nVmRSS:\t  2048 kB\n"),
            Some(2 * 1024 * 1024)
        );
        let a = ProcSample {
            rss_bytes: 0,
            cpu_ticks: 100,
        };
        let b = ProcSample {
            rss_bytes: 0,
            cpu_ticks: 300,
        };
        assert_eq!(cpu_percent(a, b, 2.0), 100.0);
    }

    #[test]
    fn samples_this_process() {
        let s = sample(std::process::id()).unwrap();
        assert!(s.rss_bytes > 1024 * 1024);
    }
}
