//! hostd-workload
