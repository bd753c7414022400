//! Shared test helpers: a recording, fault-injecting HTTP proxy in front of the real
//! influxd. It records every request (headers, decompressed body, time, answer) and can
//! answer the next N requests itself with a chosen status — the one fault (429/503 with
//! Retry-After) a real influxd cannot be made to produce on demand.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One request that went through the proxy.
#[derive(Debug, Clone)]
pub struct Seen {
    /// When it arrived.
    pub at: Instant,
    /// Request line, e.g. `POST /api/v2/write?… HTTP/1.1`.
    pub request_line: String,
    /// Headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// Body as sent.
    pub raw_body: Vec<u8>,
    /// Status the client got (0 when the upstream was unreachable).
    pub status: u16,
}

impl Seen {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body, gunzipped when Content-Encoding says gzip.
    pub fn body_text(&self) -> String {
        if self.header("content-encoding") == Some("gzip") {
            let mut s = String::new();
            flate2::read::GzDecoder::new(&self.raw_body[..])
                .read_to_string(&mut s)
                .expect("body is valid gzip");
            s
        } else {
            String::from_utf8_lossy(&self.raw_body).into_owned()
        }
    }
}

#[derive(Default)]
struct State {
    seen: Vec<Seen>,
    inject: Vec<(u16, Option<u64>)>,
}

/// The proxy; runs until the test process ends.
#[derive(Clone)]
pub struct Proxy {
    port: u16,
    state: Arc<Mutex<State>>,
}

impl Proxy {
    /// Starts a proxy to `127.0.0.1:upstream_port`.
    pub fn start(upstream_port: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State::default()));
        let st = state.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let st = st.clone();
                std::thread::spawn(move || serve(conn, upstream_port, &st));
            }
        });
        Proxy { port, state }
    }

    /// The proxy's base URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Answers the next request with `status` (and `Retry-After: secs`) instead of
    /// forwarding it.
    pub fn inject(&self, status: u16, retry_after: Option<u64>) {
        self.state
            .lock()
            .unwrap()
            .inject
            .push((status, retry_after));
    }

    /// All requests so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.lock().unwrap().seen.clone()
    }
}

/// Request line, lower-cased headers, raw header lines.
type Head = (String, Vec<(String, String)>, Vec<String>);

fn read_head(r: &mut BufReader<TcpStream>) -> Option<Head> {
    let mut request_line = String::new();
    if r.read_line(&mut request_line).ok()? == 0 {
        return None;
    }
    let mut headers = Vec::new();
    let mut raw = Vec::new();
    loop {
        let mut line = String::new();
        r.read_line(&mut line).ok()?;
        let t = line.trim_end();
        if t.is_empty() {
            break;
        }
        if let Some((k, v)) = t.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
        raw.push(t.to_owned());
    }
    Some((request_line.trim_end().to_owned(), headers, raw))
}

fn serve(conn: TcpStream, upstream_port: u16, st: &Mutex<State>) {
    let mut client_w = conn.try_clone().unwrap();
    let mut r = BufReader::new(conn);
    while let Some((request_line, headers, raw)) = read_head(&mut r) {
        let at = Instant::now();
        let len: usize = headers
            .iter()
            .find(|(k, _)| k == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        if r.read_exact(&mut body).is_err() {
            return;
        }
        let injected = {
            let mut s = st.lock().unwrap();
            if s.inject.is_empty() {
                None
            } else {
                Some(s.inject.remove(0))
            }
        };
        let mut seen = Seen {
            at,
            request_line: request_line.clone(),
            headers,
            raw_body: body.clone(),
            status: 0,
        };
        if let Some((status, retry_after)) = injected {
            let ra = retry_after.map_or(String::new(), |s| format!("Retry-After: {s}\r\n"));
            let msg = br#"{"code":"unavailable","message":"injected by test proxy"}"#;
            let resp = format!(
                "HTTP/1.1 {status} Injected\r\n{ra}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                msg.len()
            );
            seen.status = status;
            st.lock().unwrap().seen.push(seen);
            let _ = client_w.write_all(resp.as_bytes());
            let _ = client_w.write_all(msg);
            continue;
        }
        // Forward with Connection: close, relay the whole answer, then close ours too.
        let Ok(mut up) = TcpStream::connect(("127.0.0.1", upstream_port)) else {
            st.lock().unwrap().seen.push(seen);
            return; // client sees the connection drop, as with a stopped server
        };
        let mut head = format!("{request_line}\r\n");
        for h in raw.iter().filter(|h| {
            let l = h.to_ascii_lowercase();
            !l.starts_with("connection:")
        }) {
            head.push_str(h);
            head.push_str("\r\n");
        }
        head.push_str("Connection: close\r\n\r\n");
        if up.write_all(head.as_bytes()).is_err() || up.write_all(&body).is_err() {
            st.lock().unwrap().seen.push(seen);
            return;
        }
        let mut resp = Vec::new();
        let _ = up.read_to_end(&mut resp);
        seen.status = std::str::from_utf8(&resp[..resp.len().min(12)])
            .ok()
            .and_then(|s| s.get(9..12))
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        st.lock().unwrap().seen.push(seen);
        let _ = client_w.write_all(&resp);
        return;
    }
}

/// Integer field `name` of each line of a line-protocol body, in order.
pub fn int_field(body: &str, name: &str) -> Vec<i64> {
    let key = format!("{name}=");
    body.lines()
        .filter_map(|l| {
            let fields = l.split(' ').nth(1)?;
            let v = fields
                .split(',')
                .find_map(|f| f.strip_prefix(key.as_str()))?;
            v.trim_end_matches('i').parse().ok()
        })
        .collect()
}

/// A workload file record of target `t0` as the runner writes it: `bytes` moved in
/// `[start_ns, end_ns)`, 1 MiB I/Os at queue depth 8, a read verified clean.
pub fn file_record(
    phase: &str,
    index: u32,
    start_ns: u64,
    end_ns: u64,
    bytes: u64,
) -> hostd_records::FileRecord {
    hostd_records::FileRecord {
        target: "t0".into(),
        target_index: 0,
        phase: phase.into(),
        index,
        start_ns,
        end_ns,
        bytes,
        mbps: bytes as f64 / ((end_ns - start_ns) as f64 / 1e9) / 1e6,
        verified: (phase == "read").then_some(true),
        corrupt_blocks: 0,
        corrupt_bytes: 0,
        late_ops: 0,
        block_size: 1 << 20,
        queue_depth: 8,
        corrupt: Vec::new(),
        direct_io: true,
        status: "ok".into(),
        probe: None,
        latency: None,
    }
}

/// A [`Proxy`] in front of `server`, and `server`'s write target pointed at it.
pub fn proxied(server: &hostd_influx::testing::InfluxServer) -> (Proxy, hostd_influx::Target) {
    let proxy = Proxy::start(server.port());
    let mut target = server.target();
    target.url = proxy.url();
    (proxy, target)
}
