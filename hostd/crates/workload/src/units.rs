//! Byte sizes written the way people write them (`2MB`, `2 GiB`, `128KiB`, `4096`): the type
//! and its parser are the profile's, in [`hostd_records::units`]; here the printing of
//! measured byte counts.

pub use hostd_records::units::{parse_size, ByteSize};

/// Formats bytes with a decimal unit, e.g. `1.60 GB`.
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e12 {
        format!("{:.2} TB", b / 1e12)
    } else if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{bytes} B")
    }
}
