//! The token never appears in logs (tracing at TRACE level, all threads) or in Debug
//! output of the configuration, even when the server refuses it.

use hostd_influx::testing::InfluxServer;
use hostd_influx::{InfluxArgs, Point, Token, Writer, WriterConfig};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn token_never_logged_nor_in_debug_output() {
    let cap = Capture::default();
    let make = {
        let cap = cap.clone();
        move || cap.clone()
    };
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(make)
        .with_ansi(false)
        .init();

    let s = InfluxServer::start().unwrap_or_else(|e| panic!("{e:#}"));
    let good = s.token().expose().to_owned();
    let bad = "bad-secret-token-QQ7731";

    // A refused token: the writer logs the failure.
    let mut target = s.target();
    target.token = Token::new(bad);
    let mut cfg = WriterConfig::new(target, None);
    cfg.backoff_max = Duration::from_millis(100);
    let debug_cfg = format!("{cfg:?}");
    let w = Writer::start(cfg).unwrap();
    w.write(&Point::new("m").field("v", 1i64)).unwrap();
    let report = w.close(Duration::from_millis(500));
    assert!(report.last_error.as_deref().unwrap_or("").contains("401"));

    // A working token: a normal run logs too (at TRACE, reqwest/hyper included).
    let w = Writer::start(WriterConfig::new(s.target(), None)).unwrap();
    w.write(&Point::new("m").field("v", 2i64)).unwrap();
    assert!(w.close(Duration::from_secs(10)).is_complete());

    let token_file = s.token_file().unwrap();
    let args = InfluxArgs {
        url: Some(s.url()),
        org: "throttlescope".into(),
        bucket: "throttlescope".into(),
        token_file: Some(token_file),
    };
    let debug_target = format!("{:?}", args.target().unwrap());

    let logs = String::from_utf8(cap.0.lock().unwrap().clone()).unwrap();
    assert!(logs.contains("401"), "the refusal was logged: {logs}");
    for text in [&logs, &debug_cfg, &debug_target, &format!("{s:?}")] {
        assert!(!text.contains(bad), "bad token leaked");
        assert!(!text.contains(&good), "good token leaked");
    }
    assert!(debug_target.contains("<redacted>"));
}
