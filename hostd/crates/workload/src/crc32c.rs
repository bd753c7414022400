//! CRC-32C (Castagnoli, iSCSI), hardware-accelerated on x86-64 with SSE4.2 and
//! table-driven elsewhere. Also "shift" tables that combine the CRCs of
//! concatenated pieces, so a block's CRC can be assembled from precomputed
//! parts (cheap writes) and computed in three interleaved streams (fast reads).

use crc::{Crc, CRC_32_ISCSI};

const SOFT: Crc<u32, crc::Table<16>> = Crc::<u32, crc::Table<16>>::new(&CRC_32_ISCSI);

/// CRC-32C of `data` (standard: initial ~0, final xor ~0).
pub fn crc32c(data: &[u8]) -> u32 {
    !raw(!0, data)
}

/// Advances the raw (un-inverted) CRC register `reg` over `data`.
pub fn raw(reg: u32, data: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("sse4.2") {
            // SAFETY: the feature is present.
            return unsafe { raw_sse42(reg, data) };
        }
    }
    raw_soft(reg, data)
}

fn raw_soft(reg: u32, data: &[u8]) -> u32 {
    // The crc crate bit-reverses the initial value of reflected algorithms
    // and xors the result with ~0; undo both around it.
    let mut digest = SOFT.digest_with_initial(reg.reverse_bits());
    digest.update(data);
    !digest.finalize()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
unsafe fn raw_sse42(reg: u32, data: &[u8]) -> u32 {
    use std::arch::x86_64::{_mm_crc32_u64, _mm_crc32_u8};
    let mut c = reg as u64;
    let mut chunks = data.chunks_exact(8);
    for w in &mut chunks {
        c = _mm_crc32_u64(c, u64::from_le_bytes(w.try_into().unwrap()));
    }
    let mut c = c as u32;
    for &b in chunks.remainder() {
        c = _mm_crc32_u8(c, b);
    }
    c
}

/// Multiplies a raw CRC register by x^(8·len): the register after feeding
/// `len` zero bytes, as four byte tables (the map is linear over GF(2)).
pub struct Shift {
    tables: Box<[[u32; 256]; 4]>,
}

impl Shift {
    /// Tables for appending `len` bytes.
    pub fn new(len: usize) -> Shift {
        let zeros = vec![0u8; len];
        let mut tables = Box::new([[0u32; 256]; 4]);
        for (k, table) in tables.iter_mut().enumerate() {
            for (b, slot) in table.iter_mut().enumerate() {
                *slot = raw((b as u32) << (8 * k), &zeros);
            }
        }
        Shift { tables }
    }

    /// The register `reg` advanced over `len` zero bytes.
    #[inline]
    pub fn apply(&self, reg: u32) -> u32 {
        let t = &self.tables;
        t[0][(reg & 0xff) as usize]
            ^ t[1][((reg >> 8) & 0xff) as usize]
            ^ t[2][((reg >> 16) & 0xff) as usize]
            ^ t[3][(reg >> 24) as usize]
    }
}

/// Combines raw registers: `raw(r, a ‖ b) = shift_{|b|}(raw(r, a)) ^ raw(0, b)`.
#[inline]
pub fn combine(reg_a: u32, reg_b_from_zero: u32, shift_b: &Shift) -> u32 {
    shift_b.apply(reg_a) ^ reg_b_from_zero
}

/// Three-stream CRC of a fixed-length buffer: the buffer is cut into a head of
/// `len - 2·part` bytes and two tails of `part` bytes, computed interleaved.
pub struct Interleaved3 {
    part: usize,
    shift: Shift,
}

impl Interleaved3 {
    /// For buffers of `len` bytes.
    pub fn new(len: usize) -> Interleaved3 {
        let part = (len / 3) / 8 * 8;
        Interleaved3 {
            part,
            shift: Shift::new(part),
        }
    }

    /// Raw register over `data` starting from `reg` (`data.len()` must be the `len` given to `new`).
    pub fn raw(&self, reg: u32, data: &[u8]) -> u32 {
        let head = data.len() - 2 * self.part;
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("sse4.2") && head.is_multiple_of(8) {
                // SAFETY: the feature is present; lengths checked.
                let (a, b, c) = unsafe { raw3_sse42(reg, data, head, self.part) };
                return combine(combine(a, b, &self.shift), c, &self.shift);
            }
        }
        let a = raw(reg, &data[..head]);
        let b = raw(0, &data[head..head + self.part]);
        let c = raw(0, &data[head + self.part..]);
        combine(combine(a, b, &self.shift), c, &self.shift)
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
unsafe fn raw3_sse42(reg: u32, data: &[u8], head: usize, part: usize) -> (u32, u32, u32) {
    use std::arch::x86_64::_mm_crc32_u64;
    let p = data.as_ptr();
    let (mut a, mut b, mut c) = (reg as u64, 0u64, 0u64);
    let extra = (head - part) / 8; // head is longer than part by up to 2 words
    let words = part / 8;
    let rd = |off: usize| std::ptr::read_unaligned(p.add(off) as *const u64);
    for i in 0..extra {
        a = _mm_crc32_u64(a, rd(i * 8));
    }
    let ha = extra * 8;
    for i in 0..words {
        a = _mm_crc32_u64(a, rd(ha + i * 8));
        b = _mm_crc32_u64(b, rd(head + i * 8));
        c = _mm_crc32_u64(c, rd(head + part + i * 8));
    }
    (a as u32, b as u32, c as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vector() {
        // CRC-32C("123456789") = 0xE3069283.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(!raw_soft(!0, b"123456789"), 0xE306_9283);
    }

    #[test]
    fn hardware_and_table_agree_and_combine_works() {
        let data: Vec<u8> = (0..10_000u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        assert_eq!(raw(!0, &data), raw_soft(!0, &data));
        assert_eq!(raw(0x1234_5678, &data), raw_soft(0x1234_5678, &data));
        let (a, b) = data.split_at(3333);
        let s = Shift::new(b.len());
        assert_eq!(combine(raw(!0, a), raw(0, b), &s), raw(!0, &data));
        for len in [4088usize, 4096, 1 << 20] {
            let d = &data.repeat(200)[..len];
            assert_eq!(Interleaved3::new(len).raw(!0, d), raw(!0, d), "len {len}");
        }
    }
}
