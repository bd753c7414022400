//! Serial link (being built).
