//! A sigrok session file (`.sr`) as a source of CC edges.
//!
//! The file is a zip archive: `metadata` (INI: `[device 1]` with `samplerate`, `unitsize`,
//! `capturefile` and `probeN = NAME` for each logic channel) and the samples in
//! `logic-1-1`, `logic-1-2`, … (or one `logic-1`, in files of sigrok's first format),
//! each sample `unitsize` bytes, little-endian, probe N in bit N-1. The samples are
//! streamed, never held whole. An edge is the index of the first sample at the new level,
//! as sigrok numbers samples (and as `firmware/scripts/sr2edges.py` writes fixtures).

use crate::Error;
use std::io::{Read, Seek};
use std::path::Path;

/// A logic channel of the session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Channel {
    /// Its name (`probeN = NAME`), e.g. `CC1`.
    pub name: String,
    /// N of `probeN`: 1-based, the sample's bit N-1.
    pub probe: u32,
}

/// An open session file.
pub struct Session<R> {
    zip: zip::ZipArchive<R>,
    samplerate: u64,
    unitsize: usize,
    channels: Vec<Channel>,
    chunks: Vec<String>,
}

impl<R> std::fmt::Debug for Session<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("samplerate", &self.samplerate)
            .field("unitsize", &self.unitsize)
            .field("channels", &self.channels)
            .field("chunks", &self.chunks.len())
            .finish()
    }
}

/// What a scan of the samples saw besides the edges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scan {
    /// Whole samples in the capture.
    pub samples: u64,
    /// Each scanned channel's level at sample 0 (false for an empty capture).
    pub initial: Vec<bool>,
    /// Each scanned channel's last edge (None: the line never changed).
    pub last_edge: Vec<Option<u64>>,
}

impl Session<std::fs::File> {
    /// Opens the session file at `path`.
    pub fn open(path: &Path) -> Result<Self, Error> {
        Session::from_reader(std::fs::File::open(path)?)
    }
}

impl<R: Read + Seek> Session<R> {
    /// Reads a session from a zip archive in `reader`: its metadata now, its samples when
    /// scanned.
    pub fn from_reader(reader: R) -> Result<Self, Error> {
        let mut zip = zip::ZipArchive::new(reader)?;
        let mut text = String::new();
        zip.by_name("metadata")
            .map_err(|_| Error::Metadata("the archive has no `metadata` member".into()))?
            .read_to_string(&mut text)?;
        let meta = Metadata::parse(&text, "device 1")?;
        let samplerate = parse_samplerate(meta.get("samplerate")?)?;
        let unitsize: usize = meta
            .get("unitsize")?
            .parse()
            .ok()
            .filter(|u| *u > 0)
            .ok_or_else(|| Error::Metadata("unitsize is not a positive integer".into()))?;
        let mut channels: Vec<Channel> = meta
            .entries
            .iter()
            .filter_map(|(k, v)| {
                let n: u32 = k.strip_prefix("probe")?.parse().ok()?;
                Some(Channel {
                    name: v.clone(),
                    probe: n,
                })
            })
            .collect();
        channels.sort_by_key(|c| c.probe);
        if let Some(c) = channels
            .iter()
            .find(|c| c.probe == 0 || c.probe as usize > unitsize * 8)
        {
            return Err(Error::Metadata(format!(
                "probe{} is outside a sample of {unitsize} byte(s)",
                c.probe
            )));
        }
        let base = meta.get("capturefile").unwrap_or("logic-1").to_string();
        let mut chunks: Vec<(u64, String)> = zip
            .file_names()
            .filter_map(|n| {
                if n == base {
                    return Some((0, n.to_string()));
                }
                let i = n.strip_prefix(&base)?.strip_prefix('-')?.parse().ok()?;
                Some((i, n.to_string()))
            })
            .collect();
        // logic-1-10 follows logic-1-9, not logic-1-1.
        chunks.sort();
        Ok(Session {
            zip,
            samplerate,
            unitsize,
            channels,
            chunks: chunks.into_iter().map(|(_, n)| n).collect(),
        })
    }

    /// The sample rate, Hz.
    pub fn samplerate(&self) -> u64 {
        self.samplerate
    }

    /// The logic channels, by probe number.
    pub fn channels(&self) -> &[Channel] {
        &self.channels
    }

    /// The channel `spec` names: a probe name (case aside), else a probe number (1-based).
    pub fn channel(&self, spec: &str) -> Result<&Channel, Error> {
        let by_name = self
            .channels
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(spec));
        let by_number = || {
            let n: u32 = spec.trim().parse().ok()?;
            self.channels.iter().find(|c| c.probe == n)
        };
        by_name
            .or_else(by_number)
            .ok_or_else(|| Error::NoSuchChannel {
                spec: spec.to_string(),
                available: self
                    .channels
                    .iter()
                    .map(|c| format!("{} (probe {})", c.name, c.probe))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// Reads every sample once and calls `on_edge(i, t, level)` for each change of the
    /// level of `probes[i]` at sample `t` (in order of `t`).
    pub fn scan(
        &mut self,
        probes: &[u32],
        mut on_edge: impl FnMut(usize, u64, bool),
    ) -> Result<Scan, Error> {
        // For each byte of a sample, the scanned channels in it: (index in probes, mask).
        let mut by_byte: Vec<Vec<(usize, u8)>> = vec![Vec::new(); self.unitsize];
        for (i, p) in probes.iter().enumerate() {
            let bit = (*p as usize).saturating_sub(1);
            if bit >= self.unitsize * 8 {
                return Err(Error::Metadata(format!("no probe{p} in the samples")));
            }
            by_byte[bit / 8].push((i, 1u8 << (bit % 8)));
        }
        let mut level = vec![false; probes.len()];
        let mut initial = vec![false; probes.len()];
        let mut last_edge = vec![None; probes.len()];
        let (mut sample, mut byte) = (0u64, 0usize);
        let mut buf = vec![0u8; 1 << 16];
        for name in &self.chunks {
            let mut member = self.zip.by_name(name)?;
            loop {
                let n = member.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                for &b in &buf[..n] {
                    for &(i, mask) in &by_byte[byte] {
                        let now = b & mask != 0;
                        if sample == 0 {
                            initial[i] = now;
                            level[i] = now;
                        } else if now != level[i] {
                            level[i] = now;
                            last_edge[i] = Some(sample);
                            on_edge(i, sample, now);
                        }
                    }
                    byte += 1;
                    if byte == self.unitsize {
                        byte = 0;
                        sample += 1;
                    }
                }
            }
        }
        Ok(Scan {
            samples: sample,
            initial,
            last_edge,
        })
    }
}

/// One section of an INI file, keys as written (sigrok's `key=value` or `key = value`).
struct Metadata {
    entries: Vec<(String, String)>,
}

impl Metadata {
    fn parse(text: &str, section: &str) -> Result<Metadata, Error> {
        let mut current = String::new();
        let mut entries = Vec::new();
        let mut found = false;
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
                continue;
            }
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                current = name.trim().to_string();
                found |= current == section;
            } else if let (true, Some((k, v))) = (current == section, line.split_once('=')) {
                entries.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
        if !found {
            return Err(Error::Metadata(format!("no [{section}] section")));
        }
        Ok(Metadata { entries })
    }

    fn get(&self, key: &str) -> Result<&str, Error> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .ok_or_else(|| Error::Metadata(format!("no `{key}`")))
    }
}

/// sigrok's rate text (`4 MHz`, `2.4 MHz`, `500 kHz`, `1 GHz`, `200 Hz`, or a bare number)
/// in Hz.
fn parse_samplerate(text: &str) -> Result<u64, Error> {
    let bad = || Error::Metadata(format!("samplerate `{text}` is not understood"));
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix("GHz") {
        (n, 1e9)
    } else if let Some(n) = t.strip_suffix("MHz") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix("kHz") {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix("Hz") {
        (n, 1.0)
    } else {
        (t, 1.0)
    };
    let value: f64 = number.trim().parse().map_err(|_| bad())?;
    let hz = (value * scale).round();
    if !(hz >= 1.0 && hz < u64::MAX as f64) {
        return Err(bad());
    }
    Ok(hz as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Cursor, Write};

    /// A session archive of `metadata` and the given chunks.
    fn archive(metadata: &str, chunks: &[(&str, &[u8])]) -> Cursor<Vec<u8>> {
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        w.start_file("metadata", opts).unwrap();
        w.write_all(metadata.as_bytes()).unwrap();
        for (name, data) in chunks {
            w.start_file(*name, opts).unwrap();
            w.write_all(data).unwrap();
        }
        let mut c = w.finish().unwrap();
        c.set_position(0);
        c
    }

    const META: &str = "[global]\nsigrok version=0.5.2\n\n[device 1]\ncapturefile=logic-1\n\
        total probes=10\nsamplerate=2.4 MHz\ntotal analog=0\nprobe1=D0\nprobe2=CC1\n\
        probe10=CC2\nunitsize=2\n";

    #[test]
    fn rates_as_sigrok_writes_them() {
        assert_eq!(parse_samplerate("4 MHz").unwrap(), 4_000_000);
        assert_eq!(parse_samplerate("2.4 MHz").unwrap(), 2_400_000);
        assert_eq!(parse_samplerate("500 kHz").unwrap(), 500_000);
        assert_eq!(parse_samplerate("1 GHz").unwrap(), 1_000_000_000);
        assert_eq!(parse_samplerate("200 Hz").unwrap(), 200);
        assert_eq!(parse_samplerate("12000000").unwrap(), 12_000_000);
        assert!(parse_samplerate("fast").is_err());
        assert!(parse_samplerate("0 Hz").is_err());
    }

    #[test]
    fn channels_by_name_or_probe_number() {
        let s = Session::from_reader(archive(META, &[])).unwrap();
        assert_eq!(s.samplerate(), 2_400_000);
        let names: Vec<_> = s.channels().iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["D0", "CC1", "CC2"]);
        assert_eq!(s.channel("cc2").unwrap().probe, 10);
        assert_eq!(s.channel("2").unwrap().name, "CC1");
        let err = s.channel("CC3").unwrap_err().to_string();
        assert!(err.contains("CC1 (probe 2)"), "{err}");
    }

    /// Chunks in numeric order across a chunk boundary inside a sample, bits of the second
    /// byte, the first sample's level, and an edge at the first sample of the new level.
    #[test]
    fn edges_across_chunks_in_numeric_order() {
        // 2-byte samples: probe2 = bit 1 of byte 0, probe10 = bit 1 of byte 1.
        let samples: Vec<[u8; 2]> = vec![[2, 0], [2, 0], [0, 2], [0, 2], [2, 2], [2, 0]];
        let bytes: Vec<u8> = samples.concat();
        // One byte a chunk, written last chunk first: logic-1-10..12 sort after -9, and every
        // sample spans two chunks.
        let mut parts: Vec<(String, Vec<u8>)> = Vec::new();
        parts.push(("logic-1-1".into(), bytes[..1].to_vec()));
        for (i, b) in bytes[1..].chunks(1).enumerate() {
            parts.push((format!("logic-1-{}", i + 2), b.to_vec()));
        }
        assert_eq!(parts.len(), 12);
        let chunks: Vec<(&str, &[u8])> = parts
            .iter()
            .rev()
            .map(|(n, d)| (n.as_str(), d.as_slice()))
            .collect();
        let mut s = Session::from_reader(archive(META, &chunks)).unwrap();
        let mut edges = Vec::new();
        let scan = s
            .scan(&[2, 10], |i, t, level| edges.push((i, t, level)))
            .unwrap();
        assert_eq!(scan.samples, 6);
        assert_eq!(scan.initial, [true, false]);
        assert_eq!(scan.last_edge, [Some(4), Some(5)]);
        assert_eq!(
            edges,
            [(0, 2, false), (1, 2, true), (0, 4, true), (1, 5, false)]
        );
    }

    #[test]
    fn what_is_missing_is_named() {
        let no_rate = META.replace("samplerate=2.4 MHz\n", "");
        let err = Session::from_reader(archive(&no_rate, &[])).unwrap_err();
        assert!(err.to_string().contains("samplerate"), "{err}");
        let wide = META.replace("probe10=", "probe17=");
        let err = Session::from_reader(archive(&wide, &[])).unwrap_err();
        assert!(err.to_string().contains("probe17"), "{err}");
        let err = Session::from_reader(Cursor::new(b"not a zip".to_vec())).unwrap_err();
        assert!(matches!(err, Error::Zip(_)), "{err}");
    }
}
