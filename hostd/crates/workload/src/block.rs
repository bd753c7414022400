//! The on-disk block format and its verification.
//!
//! Every 4 KiB block of a test file is self-describing:
//!
//! | bytes    | content                                        |
//! |----------|------------------------------------------------|
//! | 0..4     | magic `TSB1`                                   |
//! | 4..8     | CRC-32C of bytes 8..4096 (little-endian)       |
//! | 8..16    | file id (target index << 32 \| file number)    |
//! | 16..24   | byte offset of the block in its file           |
//! | 24..32   | run tag (from the seed)                        |
//! | 32..4096 | payload: one of 256 random 4064-byte chunks    |
//!
//! The payload chunks come from ChaCha8 (incompressible within a block and
//! within any 1 MiB), and the header makes every block unique (no
//! deduplication). Block `k` of a file carries chunk `(r + k) mod 256`, with a
//! rotation `r` per file, so the expected content of any block can be
//! regenerated to count the corrupt bytes of a block whose CRC fails. The CRC
//! is assembled from the chunk's precomputed CRC and the 24 header bytes, and
//! an I/O buffer refilled for an offset a multiple of 1 MiB away keeps its
//! payloads: a write costs 32 bytes per block, like fio's buffer scrambling.

use crate::crc32c::{self, Interleaved3, Shift};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::sync::Arc;

/// Size of a verification block (the direct-I/O unit).
pub const BLOCK: usize = 4096;
/// Header bytes at the start of each block.
pub const HEADER: usize = 32;
const DATA: usize = BLOCK - HEADER;
const CHUNKS: usize = 256;
const MAGIC: [u8; 4] = *b"TSB1";

/// Random payload chunks and CRC tables, shared by all files of a run.
pub struct DataPool {
    data: Vec<u8>,
    chunk_reg: Vec<u32>,
    shift_data: Shift,
    crc_body: Interleaved3,
    run_tag: u64,
}

impl DataPool {
    /// Builds the pool from the run's seed (same seed → same bytes on disk).
    pub fn new(seed: u64) -> Arc<DataPool> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x7473_6232_5f64_6174);
        let mut data = vec![0u8; CHUNKS * DATA];
        rng.fill_bytes(&mut data);
        let chunk_reg = data.chunks_exact(DATA).map(|c| crc32c::raw(0, c)).collect();
        Arc::new(DataPool {
            data,
            chunk_reg,
            shift_data: Shift::new(DATA),
            crc_body: Interleaved3::new(BLOCK - 8),
            run_tag: splitmix(seed),
        })
    }

    fn chunk(&self, i: usize) -> &[u8] {
        &self.data[i * DATA..(i + 1) * DATA]
    }
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

use hostd_records::CorruptBlock;

/// Result of verifying some blocks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct VerifyReport {
    /// Blocks checked.
    pub blocks: u64,
    /// Blocks whose header or CRC did not match.
    pub corrupt_blocks: u64,
    /// Bytes that differ from what was written.
    pub corrupt_bytes: u64,
    /// The first corrupt blocks (at most [`VerifyReport::KEEP`]).
    pub corrupt: Vec<CorruptBlock>,
}

impl VerifyReport {
    /// How many corrupt blocks are listed individually.
    pub const KEEP: usize = 64;

    /// Adds another report.
    pub fn merge(&mut self, other: VerifyReport) {
        self.blocks += other.blocks;
        self.corrupt_blocks += other.corrupt_blocks;
        self.corrupt_bytes += other.corrupt_bytes;
        for c in other.corrupt {
            if self.corrupt.len() < Self::KEEP {
                self.corrupt.push(c);
            }
        }
    }
}

/// Writes and checks the blocks of one file.
#[derive(Clone)]
pub struct BlockCodec {
    pool: Arc<DataPool>,
    file_id: u64,
}

impl BlockCodec {
    /// Codec of file `file` on target `target`.
    pub fn new(pool: Arc<DataPool>, target: u32, file: u32) -> BlockCodec {
        BlockCodec {
            pool,
            file_id: ((target as u64) << 32) | file as u64,
        }
    }

    /// The file id stored in headers.
    pub fn file_id(&self) -> u64 {
        self.file_id
    }

    /// Payload chunk of the block at `offset`: a per-file rotation of the
    /// 256 chunks, so 256 consecutive blocks all differ and a buffer filled
    /// for one offset keeps the right payloads for any offset 1 MiB away.
    fn chunk_index(&self, offset: u64) -> usize {
        let rotation = splitmix(self.file_id ^ self.pool.run_tag);
        ((rotation.wrapping_add(offset / BLOCK as u64)) % CHUNKS as u64) as usize
    }

    fn header_rest(&self, offset: u64) -> [u8; 24] {
        let mut h = [0u8; 24];
        h[..8].copy_from_slice(&self.file_id.to_le_bytes());
        h[8..16].copy_from_slice(&offset.to_le_bytes());
        h[16..].copy_from_slice(&self.pool.run_tag.to_le_bytes());
        h
    }

    /// Writes one block's expected content into `out` (exactly 4096 bytes).
    pub fn fill_block(&self, out: &mut [u8], offset: u64) {
        let chunk = self.chunk_index(offset);
        let rest = self.header_rest(offset);
        let reg = crc32c::combine(
            crc32c::raw(!0, &rest),
            self.pool.chunk_reg[chunk],
            &self.pool.shift_data,
        );
        out[..4].copy_from_slice(&MAGIC);
        out[4..8].copy_from_slice(&(!reg).to_le_bytes());
        out[8..HEADER].copy_from_slice(&rest);
        out[HEADER..BLOCK].copy_from_slice(self.pool.chunk(chunk));
    }

    /// Fills `buf` for `file_offset`, reusing the payloads already in it when
    /// `primed` (what the buffer last held: file id, offset, length) says they
    /// are the same chunks — then only the 32-byte headers are rewritten.
    pub fn fill_reusing(
        &self,
        buf: &mut [u8],
        file_offset: u64,
        primed: &mut Option<(u64, u64, usize)>,
    ) {
        let same_payload = matches!(*primed, Some((id, off, len))
            if id == self.file_id && len == buf.len()
                && (file_offset.abs_diff(off) / BLOCK as u64).is_multiple_of(CHUNKS as u64)
                && file_offset.abs_diff(off).is_multiple_of(BLOCK as u64));
        if !same_payload {
            self.fill(buf, file_offset);
        } else {
            for (i, block) in buf.chunks_exact_mut(BLOCK).enumerate() {
                let offset = file_offset + (i * BLOCK) as u64;
                let rest = self.header_rest(offset);
                let reg = crc32c::combine(
                    crc32c::raw(!0, &rest),
                    self.pool.chunk_reg[self.chunk_index(offset)],
                    &self.pool.shift_data,
                );
                block[..4].copy_from_slice(&MAGIC);
                block[4..8].copy_from_slice(&(!reg).to_le_bytes());
                block[8..HEADER].copy_from_slice(&rest);
            }
        }
        *primed = Some((self.file_id, file_offset, buf.len()));
    }

    /// Fills `buf` (a multiple of 4 KiB) with the blocks at `file_offset`.
    pub fn fill(&self, buf: &mut [u8], file_offset: u64) {
        for (i, block) in buf.chunks_exact_mut(BLOCK).enumerate() {
            self.fill_block(block, file_offset + (i * BLOCK) as u64);
        }
    }

    /// Checks the blocks in `buf` read from `file_offset`.
    pub fn verify(&self, buf: &[u8], file_offset: u64) -> VerifyReport {
        let mut report = VerifyReport::default();
        for (i, block) in buf.chunks_exact(BLOCK).enumerate() {
            let offset = file_offset + (i * BLOCK) as u64;
            report.blocks += 1;
            let stored = u32::from_le_bytes(block[4..8].try_into().unwrap());
            let good = block[..4] == MAGIC
                && block[8..HEADER] == self.header_rest(offset)
                && !self.pool.crc_body.raw(!0, &block[8..]) == stored;
            if !good {
                self.locate(block, offset, &mut report);
            }
        }
        report
    }

    fn locate(&self, block: &[u8], offset: u64, report: &mut VerifyReport) {
        let mut expected = [0u8; BLOCK];
        self.fill_block(&mut expected, offset);
        let mut bad = 0u32;
        let mut first = None;
        for (j, (a, b)) in block.iter().zip(expected.iter()).enumerate() {
            if a != b {
                bad += 1;
                first.get_or_insert(j);
            }
        }
        report.corrupt_blocks += 1;
        report.corrupt_bytes += bad as u64;
        if report.corrupt.len() < VerifyReport::KEEP {
            report.corrupt.push(CorruptBlock {
                offset,
                bad_bytes: bad,
                first_bad_byte: offset + first.unwrap_or(0) as u64,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_blocks_verify_and_carry_a_correct_crc() {
        let codec = BlockCodec::new(DataPool::new(5), 1, 2);
        let mut buf = vec![0u8; 8 * BLOCK];
        codec.fill(&mut buf, 1 << 20);
        let r = codec.verify(&buf, 1 << 20);
        assert_eq!((r.blocks, r.corrupt_blocks), (8, 0));
        let stored = u32::from_le_bytes(buf[4..8].try_into().unwrap());
        assert_eq!(stored, crc32c::crc32c(&buf[8..BLOCK]));
    }

    #[test]
    fn one_flipped_byte_is_located_exactly() {
        let codec = BlockCodec::new(DataPool::new(5), 0, 0);
        let mut buf = vec![0u8; 8 * BLOCK];
        codec.fill(&mut buf, 0);
        buf[3 * BLOCK + 1000] ^= 0x40;
        let r = codec.verify(&buf, 0);
        assert_eq!((r.corrupt_blocks, r.corrupt_bytes), (1, 1));
        assert_eq!(
            r.corrupt[0],
            CorruptBlock {
                offset: 3 * BLOCK as u64,
                bad_bytes: 1,
                first_bad_byte: 3 * BLOCK as u64 + 1000
            }
        );
    }

    #[test]
    fn reused_buffers_hold_exactly_what_a_fresh_fill_gives() {
        let codec = BlockCodec::new(DataPool::new(5), 0, 3);
        let mut primed = None;
        let mut reused = vec![0u8; 256 * BLOCK];
        for off in [0u64, 1 << 20, 3 << 20, (3 << 20) + 4096, 7 << 20] {
            codec.fill_reusing(&mut reused, off, &mut primed);
            let mut fresh = vec![0u8; 256 * BLOCK];
            codec.fill(&mut fresh, off);
            assert!(reused == fresh, "offset {off}");
        }
        // A buffer primed by another file is refilled.
        let other = BlockCodec::new(DataPool::new(5), 0, 4);
        other.fill_reusing(&mut reused, 7 << 20, &mut primed);
        assert_eq!(other.verify(&reused, 7 << 20).corrupt_blocks, 0);
    }

    #[test]
    fn a_block_from_another_place_is_caught() {
        let codec = BlockCodec::new(DataPool::new(5), 0, 0);
        let mut buf = vec![0u8; 2 * BLOCK];
        codec.fill(&mut buf, 0);
        // Offset mismatch: blocks read from the wrong place.
        let r = codec.verify(&buf, BLOCK as u64);
        assert_eq!(r.corrupt_blocks, 2);
        // Another file's blocks.
        let other = BlockCodec::new(DataPool::new(5), 0, 1);
        assert_eq!(other.verify(&buf, 0).corrupt_blocks, 2);
    }

    #[test]
    fn blocks_are_unique_and_incompressible() {
        let codec = BlockCodec::new(DataPool::new(9), 0, 0);
        let mut buf = vec![0u8; 256 * BLOCK];
        codec.fill(&mut buf, 0);
        let mut seen = std::collections::HashSet::new();
        for b in buf.chunks_exact(BLOCK) {
            assert!(seen.insert(b.to_vec()), "duplicate block");
        }
        // Byte histogram of random data is flat: no byte value above 1 % of a block.
        let mut hist = [0u32; 256];
        for &x in &buf[HEADER..BLOCK] {
            hist[x as usize] += 1;
        }
        assert!(hist.iter().all(|&c| c < 45), "{:?}", hist.iter().max());
    }
}
