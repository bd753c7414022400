//! hostd-analysis
