//! hostd-report
