//! The writer against a real private influxd: escaping round trips, counts, gzip,
//! Retry-After, refused tokens and rejected data.

mod common;

use common::{int_field, proxied};
use hostd_influx::testing::InfluxServer;
use hostd_influx::{Point, Target, Token, Writer, WriterConfig};
use std::time::Duration;

fn server() -> InfluxServer {
    InfluxServer::start().unwrap_or_else(|e| panic!("{e:#}"))
}

fn fast_config(target: Target, spool: Option<std::path::PathBuf>) -> WriterConfig {
    let mut c = WriterConfig::new(target, spool);
    c.backoff_initial = Duration::from_millis(20);
    c.backoff_max = Duration::from_millis(200);
    c.flush_interval = Duration::from_millis(100);
    c
}

/// Parses Flux's CSV answer into (column → value) rows.
fn flux_rows(csv_text: &str) -> Vec<std::collections::HashMap<String, String>> {
    let mut out = Vec::new();
    for table in csv_text.split("\r\n\r\n").filter(|t| !t.trim().is_empty()) {
        let mut rdr = csv::ReaderBuilder::new().from_reader(table.as_bytes());
        let headers = rdr.headers().unwrap().clone();
        for rec in rdr.records() {
            let rec = rec.unwrap();
            out.push(
                headers
                    .iter()
                    .zip(rec.iter())
                    .map(|(h, v)| (h.to_owned(), v.to_owned()))
                    .collect(),
            );
        }
    }
    out
}

#[test]
fn escaping_edge_cases_round_trip_through_influxd() {
    let s = server();
    let tricky_tag = r"/Volumes/My Disk,a=b\c ü";
    let tricky_str = "say \"hi\"\\ then\na new line, = and ü";
    let p = Point::new("esc meas,1")
        .tag("tag key=,", tricky_tag)
        .field("field key, =", tricky_str)
        .field("f", 0.1 + 0.2)
        .field("i", i64::MIN)
        .field("u", u64::MAX)
        .field("b", false)
        .timestamp_ns(1_700_000_000_123_456_789);
    let w = Writer::start(fast_config(s.target(), None)).unwrap();
    w.write(&p).unwrap();
    let report = w.close(Duration::from_secs(10));
    assert!(report.is_complete(), "{}", report.summary());

    let csv = s
        .flux(
            r#"from(bucket: "throttlescope") |> range(start: 0)
               |> filter(fn: (r) => r._measurement == "esc meas,1")"#,
        )
        .unwrap();
    let rows = flux_rows(&csv);
    let field = |name: &str| {
        rows.iter()
            .find(|r| r["_field"] == name)
            .unwrap_or_else(|| panic!("field {name:?} missing in {csv}"))
    };
    let row = field("field key, =");
    // Flux's CSV writer turns \n inside a value into \r\n; InfluxQL's JSON is exact.
    assert_eq!(row["_value"].replace("\r\n", "\n"), tricky_str);
    let rows = s
        .rows(r#"SELECT "field key, =", "tag key=," FROM "esc meas,1""#)
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][1], tricky_str);
    assert_eq!(rows[0][2], tricky_tag);
    assert_eq!(rows[0][0], 1_700_000_000_123_456_789i64);
    assert_eq!(row["tag key=,"], tricky_tag);
    assert_eq!(row["_time"], "2023-11-14T22:13:20.123456789Z");
    assert_eq!(field("f")["_value"].parse::<f64>().unwrap(), 0.1 + 0.2);
    assert_eq!(field("i")["_value"], i64::MIN.to_string());
    assert_eq!(field("u")["_value"], u64::MAX.to_string());
    assert_eq!(field("b")["_value"], "false");
}

#[test]
fn writes_batches_and_every_point_is_counted_back_gzip_used() {
    let s = server();
    let (proxy, target) = proxied(&s);
    let mut cfg = fast_config(target, None);
    cfg.flush_interval = Duration::from_secs(600); // batches by size only in this test
    let w = Writer::start(cfg).unwrap();
    const N: i64 = 12_345;
    for i in 0..N {
        w.write(
            &Point::new("count_me")
                .tag("rig", "t")
                .field("seq", i)
                .field("power_w", 4.0 + (i % 7) as f64 * 0.1)
                .timestamp_ns(1_700_000_000_000_000_000 + i * 1_000_000),
        )
        .unwrap();
    }
    let report = w.close(Duration::from_secs(30));
    assert!(report.is_complete(), "{}", report.summary());
    assert_eq!(report.stats.written, N as u64);
    assert_eq!(s.count("count_me", "seq").unwrap(), N as u64);

    // Batches of at most 5 000 points, gzip on the wire, and in write order.
    let writes: Vec<_> = proxy
        .seen()
        .into_iter()
        .filter(|r| r.request_line.starts_with("POST /api/v2/write"))
        .collect();
    assert_eq!(writes.len(), 3, "12 345 points in batches of 5 000");
    let mut seqs = Vec::new();
    for r in &writes {
        assert_eq!(r.header("content-encoding"), Some("gzip"));
        assert_eq!(&r.raw_body[..2], &[0x1f, 0x8b], "body is gzip");
        assert!(r.header("authorization").unwrap().starts_with("Token "));
        assert!(r.request_line.contains("precision=ns"));
        let body = r.body_text();
        assert!(r.raw_body.len() * 3 < body.len(), "gzip compresses");
        seqs.extend(int_field(&body, "seq"));
    }
    assert_eq!(seqs, (0..N).collect::<Vec<_>>());
    assert!(report.stats.bytes_sent * 3 < report.stats.bytes_raw);
}

#[test]
fn retry_after_on_429_and_503_is_honoured_and_nothing_lost() {
    let s = server();
    let (proxy, target) = proxied(&s);
    proxy.inject(429, Some(1));
    proxy.inject(503, Some(1));
    let spool = tempfile::tempdir().unwrap();
    let mut cfg = fast_config(target, Some(spool.path().join("spool")));
    cfg.flush_interval = Duration::from_secs(600); // one batch, sent by close()
    let w = Writer::start(cfg).unwrap();
    for i in 0..100i64 {
        w.write(&Point::new("ra").field("seq", i).timestamp_ns(1_000 + i))
            .unwrap();
    }
    let report = w.close(Duration::from_secs(20));
    assert!(report.is_complete(), "{}", report.summary());
    assert_eq!(s.count("ra", "seq").unwrap(), 100);
    let seen = proxy.seen();
    assert_eq!(
        seen.iter().map(|r| r.status).collect::<Vec<_>>(),
        [429, 503, 204]
    );
    for pair in seen.windows(2) {
        let gap = pair[1].at - pair[0].at;
        assert!(
            gap >= Duration::from_millis(990),
            "retry after {gap:?} < Retry-After 1 s"
        );
    }
    assert_eq!(report.stats.spooled, 100);
    assert_eq!(report.stats.backfilled, 100);
    assert_eq!(report.stats.retried, 200, "two attempts from the spool");
    // The spool directory is empty again.
    assert_eq!(
        std::fs::read_dir(spool.path().join("spool"))
            .unwrap()
            .count(),
        0
    );
}

#[test]
fn bad_token_is_a_clear_error_and_points_stay_spooled_until_fixed() {
    let s = server();
    let secret = "wrong-token-Zx81-do-not-print";
    let mut target = s.target();
    target.token = Token::new(secret);
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    let w = Writer::start(fast_config(target, Some(spool.clone()))).unwrap();
    for i in 0..250i64 {
        w.write(&Point::new("tok").field("seq", i).timestamp_ns(5_000 + i))
            .unwrap();
    }
    let report = w.close(Duration::from_secs(1));
    let err = report.last_error.clone().expect("an error is reported");
    assert!(err.contains("401") && err.contains("token"), "{err}");
    assert_eq!(report.stats.written, 0);
    assert_eq!(report.spooled_remaining, 250);
    assert!(!report.is_complete());
    assert!(
        report.summary().contains("250 waiting in"),
        "{}",
        report.summary()
    );
    for text in [err, report.summary(), format!("{report:?}")] {
        assert!(!text.contains(secret), "token leaked: {text}");
    }
    let mut spooled = 0;
    for e in std::fs::read_dir(&spool).unwrap() {
        let body = std::fs::read_to_string(e.unwrap().path()).unwrap();
        assert!(!body.contains(secret));
        spooled += body.lines().count();
    }
    assert_eq!(spooled, 250, "every point is in the spool");
    assert_eq!(s.count("tok", "seq").unwrap(), 0);

    // With the right token, a new writer on the same spool backfills everything.
    let w = Writer::start(fast_config(s.target(), Some(spool.clone()))).unwrap();
    let report = w.close(Duration::from_secs(10));
    assert!(report.is_complete(), "{}", report.summary());
    assert_eq!(report.stats.backfilled, 250);
    assert_eq!(s.count("tok", "seq").unwrap(), 250);
}

#[test]
fn unknown_bucket_is_refused_with_its_name() {
    let s = server();
    let mut target = s.target();
    target.bucket = "no-such-bucket".into();
    let w = Writer::start(fast_config(target, None)).unwrap();
    w.write(&Point::new("m").field("v", 1i64)).unwrap();
    let report = w.close(Duration::from_millis(300));
    let err = report.last_error.clone().unwrap();
    assert!(
        err.contains("404") && err.contains("no-such-bucket"),
        "{err}"
    );
    assert_eq!(report.spooled_remaining, 1);
    assert!(
        report.summary().contains("NOT written"),
        "no spool dir: said plainly"
    );
}

#[test]
fn rejected_data_is_counted_kept_and_does_not_block_later_points() {
    let s = server();
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    let w = Writer::start(fast_config(s.target(), Some(spool.clone()))).unwrap();
    w.write(&Point::new("conflict").field("v", 1i64).timestamp_ns(1))
        .unwrap();
    w.flush();
    w.write(&Point::new("conflict").field("v", "text").timestamp_ns(2))
        .unwrap();
    w.flush();
    let err = w.last_error().unwrap_or_default();
    assert!(err.contains("400") || err.contains("422"), "{err}");
    assert!(err.contains("field type conflict"), "{err}");
    assert!(err.contains("rejected-"), "{err}");
    w.write(&Point::new("conflict").field("v", 3i64).timestamp_ns(3))
        .unwrap();
    let report = w.close(Duration::from_secs(10));
    assert_eq!(report.stats.rejected, 1);
    assert_eq!(report.stats.written, 2);
    assert_eq!(report.last_error, None, "later success clears the error");
    let kept: Vec<_> = std::fs::read_dir(&spool)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1);
    assert!(kept[0]
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with("rejected-"));
    assert_eq!(
        std::fs::read_to_string(&kept[0]).unwrap(),
        "conflict v=\"text\" 2\n"
    );
    assert_eq!(s.count("conflict", "v").unwrap(), 2);
}

#[test]
fn random_tag_values_and_strings_round_trip_exactly() {
    // Deterministic pseudo-random text over the characters line protocol must escape.
    let alphabet: Vec<char> = "ab Z,=\"\\ü°\t'{}#".chars().collect();
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let s = server();
    let w = Writer::start(fast_config(s.target(), None)).unwrap();
    let mut sent = Vec::new();
    let mut refused = 0;
    for i in 0..300i64 {
        let mut text =
            |len: usize| -> String { (0..len).map(|_| alphabet[next(alphabet.len())]).collect() };
        let tag = text(1 + i as usize % 9);
        let mut string = text(i as usize % 12);
        if i % 5 == 0 {
            string.push('\n');
        }
        let p = Point::new("fuzz")
            .tag("t", tag.clone())
            .field("s", string.clone())
            .field("i", i)
            .timestamp_ns(1_000_000 + i);
        match w.write(&p) {
            Ok(()) => sent.push((1_000_000 + i, tag, string)),
            Err(e) => {
                // Only what line protocol cannot carry is refused, with the reason.
                assert!(tag.ends_with('\\'), "refused {tag:?}: {e}");
                refused += 1;
            }
        }
    }
    let report = w.close(Duration::from_secs(20));
    assert!(report.is_complete(), "{}", report.summary());
    assert!(refused < 100 && sent.len() > 200);
    let rows = s.rows(r#"SELECT "s", "t" FROM "fuzz""#).unwrap();
    let mut got: Vec<(i64, String, String)> = rows
        .iter()
        .map(|r| {
            (
                r[0].as_i64().unwrap(),
                r[2].as_str().unwrap().to_owned(),
                r[1].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    got.sort();
    sent.sort();
    assert_eq!(got, sent);
}
