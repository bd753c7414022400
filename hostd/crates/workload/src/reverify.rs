//! Reading kept test files back, later, and locating every corrupt byte
//! (`hostd verify`, retention checks). The expected content of every block is
//! regenerated from the run's seed, target index and file number
//! ([`crate::block`]), so no copy of the data is needed.

use crate::block::{BlockCodec, BLOCK};
use crate::buffer::AlignedBuf;
use crate::direct::{self, OpenMode};
use serde::Serialize;
use std::path::Path;

use hostd_records::certify::BadByte;

/// What re-reading one file found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FileCheck {
    /// Bytes read.
    pub bytes: u64,
    /// 4 KiB blocks checked.
    pub blocks: u64,
    /// Blocks with at least one bad byte.
    pub corrupt_blocks: u64,
    /// Bad bytes in all.
    pub corrupt_bytes: u64,
    /// Every bad byte, in file order, up to the caller's limit.
    pub bad: Vec<BadByte>,
    /// Whether the reads bypassed the page cache.
    pub direct_io: bool,
}

/// Reads `path` whole (direct I/O where the filesystem allows it) and
/// compares every byte with what `codec` wrote; lists at most `limit` bad bytes.
pub fn check_file(path: &Path, codec: &BlockCodec, limit: usize) -> std::io::Result<FileCheck> {
    check_range(path, 0, None, codec, limit)
}

/// Like [`check_file`] for the `len` bytes at `base` of `path` (a test file's
/// extent on a raw device); `None` reads to the end. Offsets reported are
/// relative to `base`, as the blocks' headers carry them.
pub fn check_range(
    path: &Path,
    base: u64,
    len: Option<u64>,
    codec: &BlockCodec,
    limit: usize,
) -> std::io::Result<FileCheck> {
    let (file, status) = direct::open(path, OpenMode::Read, true)?;
    let len = match len {
        Some(l) => l,
        None => file.metadata()?.len().saturating_sub(base),
    };
    let mut out = FileCheck {
        direct_io: status.is_direct(),
        ..FileCheck::default()
    };
    const CHUNK: usize = 1 << 20;
    let mut buf = AlignedBuf::new(CHUNK);
    let mut expected = [0u8; BLOCK];
    let mut off = 0u64;
    while off < len {
        let want = CHUNK.min((len - off).div_ceil(BLOCK as u64) as usize * BLOCK);
        let n = read_full(&file, &mut buf.as_mut_slice()[..want], base + off)?;
        let n = n.min((len - off) as usize);
        if n == 0 {
            break;
        }
        // A file whose length is not whole blocks has a short last block:
        // the missing tail counts as wrong bytes.
        let got = &buf.as_slice()[..n];
        for (i, block) in got.chunks(BLOCK).enumerate() {
            let at = off + (i * BLOCK) as u64;
            out.blocks += 1;
            let whole = block.len() == BLOCK;
            if whole && codec.verify(block, at).corrupt_blocks == 0 {
                continue;
            }
            codec.fill_block(&mut expected, at);
            let before = out.corrupt_bytes;
            for (j, &e) in expected.iter().enumerate() {
                let found = block.get(j).copied();
                if found != Some(e) {
                    out.corrupt_bytes += 1;
                    if out.bad.len() < limit && found.is_some() {
                        out.bad.push(BadByte {
                            offset: at + j as u64,
                            expected: e,
                            found: found.unwrap_or(0),
                        });
                    }
                }
            }
            if out.corrupt_bytes > before {
                out.corrupt_blocks += 1;
            }
        }
        out.bytes += n as u64;
        off += n as u64;
    }
    Ok(out)
}

/// Reads until `buf` is full or the file ends.
fn read_full(file: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match direct::read_at(file, &mut buf[done..], at + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::DataPool;

    #[test]
    fn every_bad_byte_is_listed_with_its_offset_and_values() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f00002.dat");
        let codec = BlockCodec::new(DataPool::new(11), 0, 2);
        let mut data = vec![0u8; 3 * BLOCK];
        codec.fill(&mut data, 0);
        let (a, b) = (5000usize, 5001usize);
        let (ea, eb) = (data[a], data[b]);
        data[a] ^= 0xff;
        data[b] ^= 0x01;
        std::fs::write(&path, &data).unwrap();
        let c = check_file(&path, &codec, 100).unwrap();
        assert_eq!((c.blocks, c.corrupt_blocks, c.corrupt_bytes), (3, 1, 2));
        assert_eq!(
            c.bad,
            vec![
                BadByte {
                    offset: 5000,
                    expected: ea,
                    found: ea ^ 0xff
                },
                BadByte {
                    offset: 5001,
                    expected: eb,
                    found: eb ^ 0x01
                }
            ]
        );
    }

    #[test]
    fn a_clean_file_has_no_bad_bytes_and_a_truncated_one_does() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f00000.dat");
        let codec = BlockCodec::new(DataPool::new(3), 1, 0);
        let mut data = vec![0u8; 2 * BLOCK];
        codec.fill(&mut data, 0);
        std::fs::write(&path, &data).unwrap();
        assert_eq!(check_file(&path, &codec, 10).unwrap().corrupt_bytes, 0);
        std::fs::write(&path, &data[..BLOCK + 100]).unwrap();
        let c = check_file(&path, &codec, 10).unwrap();
        assert_eq!(c.corrupt_bytes, (BLOCK - 100) as u64);
    }
}
