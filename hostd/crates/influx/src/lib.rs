//! hostd-influx
