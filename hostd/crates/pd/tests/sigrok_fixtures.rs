//! The C decoder, through this crate's wrapper, against sigrok's decoding of the real
//! captures in `fixtures/usb-pd/`: every message in order (time, ordered set, header,
//! objects, CRC and its verdict, type and MessageID as sigrok names them), the counts that
//! fixtures/usb-pd/README.md's table gives per fixture, and the contracts it names.

use hostd_pd::fixture::{kind_name_of_sigrok, EdgeFile, SigrokDecoding};
use hostd_pd::{Config, ContractState, Counters, Decoder, Message};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/usb-pd")
}

/// Every fixture's name (`<stem>.<cc1|cc2>`), sorted.
fn fixture_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures())
        .expect("fixtures/usb-pd")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            Some(name.strip_suffix(".edges")?.to_string())
        })
        .collect();
    names.sort();
    names
}

fn read(name: &str, ext: &str) -> String {
    let path = fixtures().join(format!("{name}{ext}"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A fixture's edges through a decoder, idle to the capture's end (as the C test does).
fn decode(edges: &EdgeFile, glitch_ns: u32) -> (Vec<Message>, ContractState, Counters) {
    let mut d = Decoder::new(Config {
        glitch_ns,
        ..Config::new(edges.clock_hz)
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let mut out = Vec::new();
    for (t, level) in edges.levels() {
        d.feed_edge(t, level);
        out.extend(std::iter::from_fn(|| d.take()));
    }
    let last = edges.edges.last().copied().unwrap_or(0);
    d.idle(edges.samples.max(last + u64::from(edges.clock_hz / 1000)));
    out.extend(std::iter::from_fn(|| d.take()));
    (out, d.contract(), d.counters())
}

#[test]
fn every_message_is_as_sigrok_decoded_it() {
    let names = fixture_names();
    assert_eq!(
        names.len(),
        10,
        "fixtures/usb-pd has ten captures: {names:?}"
    );
    for name in &names {
        let edges = EdgeFile::parse(&read(name, ".edges")).unwrap();
        let want = SigrokDecoding::parse(&read(name, ".sigrok.txt")).unwrap();
        // As captured, and through a 300 ns glitch filter that must not touch a real capture.
        for glitch_ns in [0, 300] {
            let (got, _, c) = decode(&edges, glitch_ns);
            for (i, (m, w)) in got.iter().zip(&want.packets).enumerate() {
                let at = format!("{name} (glitch {glitch_ns} ns): message {i}: sigrok {w:?}");
                assert_eq!(m.t(), w.start, "{at}");
                assert_eq!(m.sop(), w.sop, "{at}");
                if w.sop.is_reset() {
                    continue;
                }
                assert_eq!(Some(m.header_word()), w.header, "{at}");
                assert_eq!(m.objects(), w.objects.as_slice(), "{at}");
                assert_eq!(Some(m.crc()), w.crc, "{at}");
                assert_eq!(m.crc_ok(), !w.bad_crc, "{at}");
                assert_eq!(Some(m.header().id), w.id, "{at}");
                let sigrok_kind = kind_name_of_sigrok(&w.type_name);
                assert_eq!(Some(m.kind_name()), sigrok_kind, "{at}");
            }
            assert_eq!(got.len(), want.packets.len(), "{name}: messages");
            assert_eq!(c.messages as usize, want.packets.len(), "{name}");
            let bad = want.packets.iter().filter(|p| p.bad_crc).count();
            assert_eq!(c.crc_failures as usize, bad, "{name}: CRC failures");
            assert_eq!(
                c.noise_bursts as usize, want.no_sop,
                "{name}: bursts without SOP"
            );
            assert_eq!(c.queue_overflows, 0, "{name}");
            assert_eq!(c.edges as usize, edges.edges.len(), "{name}: edges");
        }
    }
}

/// One row of fixtures/usb-pd/README.md's table: messages per ordered set and bursts
/// without one, as its "messages (sigrok)" column counts them ("19 SOP, 1 SOP', 1 burst
/// with no SOP"; what is in parentheses describes them).
#[derive(Debug, Default, PartialEq)]
struct Row {
    per_sop: BTreeMap<String, usize>,
    no_sop: usize,
}

fn readme_rows() -> BTreeMap<String, Row> {
    let readme = read("README", ".md");
    let mut rows = BTreeMap::new();
    for line in readme.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let name = cells[0].trim_matches('`').to_string();
        let mut text = String::new();
        let mut depth = 0;
        for ch in cells[5].chars() {
            match ch {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ if depth == 0 => text.push(ch),
                _ => {}
            }
        }
        let words: Vec<&str> = text
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|w| !w.is_empty())
            .collect();
        let mut row = Row::default();
        for pair in words.windows(2) {
            let Ok(n) = pair[0].parse::<usize>() else {
                continue;
            };
            if pair[1].starts_with("SOP") {
                *row.per_sop.entry(pair[1].to_string()).or_default() += n;
            } else if pair[1].starts_with("burst") {
                row.no_sop += n;
            }
        }
        rows.insert(name, row);
    }
    rows
}

#[test]
fn the_counts_are_those_of_the_readme_table() {
    let rows = readme_rows();
    assert_eq!(
        rows.keys().cloned().collect::<Vec<_>>(),
        fixture_names(),
        "README rows and fixture files"
    );
    for (name, want) in &rows {
        let (got, _, c) = decode(&EdgeFile::parse(&read(name, ".edges")).unwrap(), 0);
        let mut per_sop: BTreeMap<String, usize> = BTreeMap::new();
        for m in &got {
            *per_sop.entry(m.sop().name().to_string()).or_default() += 1;
        }
        let row = Row {
            per_sop,
            no_sop: c.noise_bursts as usize,
        };
        assert_eq!(&row, want, "{name}: decoded (left), README (right)");
    }
}

/// The contracts the README's table names, in V, A and W, at the end of each capture.
#[test]
fn the_contracts_the_readme_names() {
    let expect = [
        ("macbook_2015-apple_power_brick.cc1", 14_800, None),
        ("pixel_2015-power_supply_20V.cc1", 20_000, Some(3_000)),
        ("thinkpad_yoga_370-aukey_45w.cc2", 20_000, Some(2_250)),
        (
            "zy12pds_sink_module-65w_noname_supply.cc1",
            9_000,
            Some(3_000),
        ),
    ];
    for (name, mv, ma) in expect {
        let (_, contract, _) = decode(&EdgeFile::parse(&read(name, ".edges")).unwrap(), 0);
        let c = contract
            .current
            .unwrap_or_else(|| panic!("{name}: no contract"));
        assert_eq!(c.mv, mv, "{name}: {c:?}");
        if let Some(ma) = ma {
            assert_eq!(c.ma, ma, "{name}: {c:?}");
            assert_eq!(
                u64::from(c.mw),
                u64::from(mv) * u64::from(ma) / 1000,
                "{name}"
            );
        }
    }
}
