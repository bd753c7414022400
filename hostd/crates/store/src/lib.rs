//! hostd-store
