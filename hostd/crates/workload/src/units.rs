//! Byte sizes written the way people write them (`2MB`, `2 GiB`, `128KiB`, `4096`): the type
//! and its parser are the profile's, in [`hostd_records::units`]; here the printing of
//! measured byte counts.

pub use hostd_records::units::{parse_size, ByteSize};
