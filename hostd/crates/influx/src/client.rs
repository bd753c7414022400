//! One gzip-compressed `POST /api/v2/write` and the classification of its outcome.

use crate::Token;
use flate2::write::GzEncoder;
use flate2::Compression;
use std::fmt;
use std::io::Write as _;
use std::time::Duration;

/// Where and how to write: server URL, organisation, bucket and token.
#[derive(Clone)]
pub struct Target {
    /// Base URL, e.g. `http://127.0.0.1:8086`.
    pub url: String,
    /// Organisation name.
    pub org: String,
    /// Bucket name.
    pub bucket: String,
    /// API token (redacted in `Debug`).
    pub token: Token,
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Target")
            .field("url", &self.url)
            .field("org", &self.org)
            .field("bucket", &self.bucket)
            .field("token", &self.token)
            .finish()
    }
}

/// The outcome of a failed write, classified for the retry logic.
#[derive(Debug, Clone, PartialEq)]
pub enum WriteFailure {
    /// Worth retrying: the server is away, overloaded (429/503) or failed (5xx).
    /// `retry_after` is the server's `Retry-After`, if it sent one.
    Transient {
        /// Human-readable cause.
        reason: String,
        /// The server's requested delay.
        retry_after: Option<Duration>,
    },
    /// The server refused the credentials or the target (401, 403, 404): retrying the same
    /// request will not help until someone fixes the configuration.
    Refused {
        /// HTTP status.
        status: u16,
        /// Human-readable cause including the server's message.
        reason: String,
    },
    /// The server rejected the data itself (400 partial write, 413, 422): never retried.
    Rejected {
        /// HTTP status.
        status: u16,
        /// Human-readable cause including the server's message.
        reason: String,
    },
}

impl fmt::Display for WriteFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteFailure::Transient { reason, .. } => write!(f, "{reason}"),
            WriteFailure::Refused { reason, .. } | WriteFailure::Rejected { reason, .. } => {
                write!(f, "{reason}")
            }
        }
    }
}

/// A blocking InfluxDB v2 write client. Use it from a plain thread (the writer owns one).
pub struct WriteClient {
    http: reqwest::blocking::Client,
    target: Target,
    write_url: String,
    gzip: bool,
}

impl fmt::Debug for WriteClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriteClient")
            .field("target", &self.target)
            .field("gzip", &self.gzip)
            .finish()
    }
}

/// Sizes of one successful write, for counters and the gzip check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sent {
    /// Bytes of line protocol before compression.
    pub raw_bytes: usize,
    /// Bytes actually sent in the request body.
    pub body_bytes: usize,
}

impl WriteClient {
    /// Builds a client for `target`; `timeout` bounds each request.
    pub fn new(target: Target, timeout: Duration, gzip: bool) -> anyhow::Result<Self> {
        let base = target.url.trim_end_matches('/');
        let write_url = reqwest::Url::parse_with_params(
            &format!("{base}/api/v2/write"),
            &[
                ("org", target.org.as_str()),
                ("bucket", target.bucket.as_str()),
                ("precision", "ns"),
            ],
        )
        .map_err(|e| anyhow::anyhow!("invalid InfluxDB URL {:?}: {e}", target.url))?
        .to_string();
        let http = reqwest::blocking::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(2)))
            .build()
            .map_err(|e| anyhow::anyhow!("cannot build HTTP client: {e}"))?;
        Ok(WriteClient {
            http,
            target,
            write_url,
            gzip,
        })
    }

    /// The target this client writes to.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// Posts `body` (newline-separated line protocol).
    pub fn write(&self, body: &[u8]) -> Result<Sent, WriteFailure> {
        let mut req = self
            .http
            .post(&self.write_url)
            .header("Authorization", self.target.token.header_value())
            .header("Content-Type", "text/plain; charset=utf-8")
            .header("Accept", "application/json");
        let payload = if self.gzip {
            req = req.header("Content-Encoding", "gzip");
            gzip(body)
        } else {
            body.to_vec()
        };
        let body_bytes = payload.len();
        let resp = match req.body(payload).send() {
            Ok(r) => r,
            Err(e) => {
                return Err(WriteFailure::Transient {
                    reason: format!("InfluxDB at {} unreachable: {}", self.target.url, chain(&e)),
                    retry_after: None,
                })
            }
        };
        let status = resp.status().as_u16();
        if (200..300).contains(&status) {
            return Ok(Sent {
                raw_bytes: body.len(),
                body_bytes,
            });
        }
        let retry_after = resp
            .headers()
            .get("Retry-After")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let message = server_message(resp.text().unwrap_or_default());
        let where_ = format!(
            "org '{}', bucket '{}' at {}",
            self.target.org, self.target.bucket, self.target.url
        );
        Err(match status {
            401 | 403 => WriteFailure::Refused {
                status,
                reason: format!(
                    "InfluxDB refused the token ({status}) for {where_}: {message}; \
                     check INFLUX_TOKEN / --influx-token-file"
                ),
            },
            404 => WriteFailure::Refused {
                status,
                reason: format!("InfluxDB has no {where_} (404): {message}"),
            },
            408 | 429 | 500..=599 => WriteFailure::Transient {
                reason: format!("InfluxDB answered {status} for {where_}: {message}"),
                retry_after,
            },
            _ => WriteFailure::Rejected {
                status,
                reason: format!("InfluxDB rejected data ({status}) for {where_}: {message}"),
            },
        })
    }
}

/// Compresses `body` with gzip (fast level: the link is loopback or LAN).
pub fn gzip(body: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::with_capacity(body.len() / 4 + 64), Compression::fast());
    enc.write_all(body).expect("writing to a Vec cannot fail");
    enc.finish().expect("writing to a Vec cannot fail")
}

fn server_message(text: String) -> String {
    let msg = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("message").and_then(|m| m.as_str()).map(str::to_owned))
        .unwrap_or(text);
    let msg = msg.trim();
    if msg.is_empty() {
        "(no message)".to_owned()
    } else if msg.len() > 500 {
        let mut end = 500;
        while !msg.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &msg[..end])
    } else {
        msg.to_owned()
    }
}

fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}
