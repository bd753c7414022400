//! hostd-probe
