//! Loopback ports for the servers tests start. A port is picked below Linux's ephemeral range
//! (where `bind(0)` and every outgoing connection take theirs): while a server of a test is
//! starting, or down for a restart, no other test's pick and no connection takes its port.
//! Two tests may still pick the same one; each start checks the server is its own and tries
//! again on a new port.

use std::process::Command;

/// The first port of the kernel's ephemeral range (32768 where it cannot be read).
fn ephemeral_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse().ok())
        .filter(|start| *start > 21_000)
        .unwrap_or(32_768)
}

/// A loopback port below the ephemeral range, free when picked.
pub fn stable_port() -> u16 {
    let top = ephemeral_start();
    loop {
        let port = 20_000 + rand::random::<u16>() % (top - 20_000);
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// Whether the Redis answering on `port` is the process `pid` (not another test's).
pub fn redis_is(port: u16, pid: u32) -> bool {
    let Ok(out) = Command::new("redis-cli")
        .args(["-p", &port.to_string(), "info", "server"])
        .output()
    else {
        return false;
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .any(|line| line.trim() == format!("process_id:{pid}"))
}
