//! hostd-pd: the firmware core's USB Power Delivery decoder on the host.
//!
//! `build.rs` compiles `firmware/core/src/pd_decode.c`, the file the probe runs, and this
//! crate wraps it safely: a [`Decoder`] takes one CC line's edges and gives its messages,
//! the explicit contract and the error counters; [`fields`] reads headers, PDOs, RDOs and
//! VDM headers with the same C functions; [`Reader`] turns a message's objects into a
//! [`Payload`]. [`Session`] reads a sigrok session file (`.sr`) into edges and
//! [`capture::decode`] runs a whole one through the decoder, as `hostd pd-decode` does.
//!
//! | module | owns |
//! |---|---|
//! | `ffi` | the C types' `#[repr(C)]` mirrors and the C functions |
//! | [`decoder`] | [`Decoder`], [`Message`], [`ContractState`], [`Counters`] |
//! | [`fields`] | [`Header`], [`Pdo`], [`Rdo`], [`Vdm`], [`Supply`] |
//! | [`reading`] | [`Reader`] and [`Payload`]: what a message's objects say, printed |
//! | [`session`] | [`Session`]: a `.sr` file's metadata, channels and edges |
//! | [`capture`] | a session through one decoder per channel |
//! | [`fixture`] | the formats of `fixtures/usb-pd/`: `.edges` and `.sigrok.txt` |
//!
//! Built for a target without a C compiler (the Apple targets CI lints from Linux), the
//! crate still builds: [`Decoder::new`] and [`decoder_built`] then fail with
//! [`Error::NotBuilt`].

#![warn(missing_docs)]

pub mod capture;
pub mod decoder;
mod error;
mod ffi;
pub mod fields;
pub mod fixture;
pub mod reading;
pub mod session;

pub use decoder::{
    Config, Contract, ContractEnd, ContractState, Counters, Decoder, Kind, Message, Sop,
};
pub use error::Error;
pub use fields::{Header, Pdo, Rdo, Supply, Vdm};
pub use reading::{Payload, Reader};
pub use session::{Channel, Session};

/// Ok when the C decoder was compiled into this build, else [`Error::NotBuilt`] with
/// build.rs's reason.
pub fn decoder_built() -> Result<(), Error> {
    match MISSING {
        Some(reason) => Err(Error::NotBuilt(reason)),
        None => Ok(()),
    }
}

/// Why the C decoder was not compiled (build.rs's reason), or None.
#[cfg(no_pd_core)]
const MISSING: Option<&str> = Some(env!("HOSTD_PD_CORE_MISSING"));
#[cfg(not(no_pd_core))]
const MISSING: Option<&str> = None;
