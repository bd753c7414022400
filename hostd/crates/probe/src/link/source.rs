//! Where the probe is: `--probe PORT|auto[:SERIAL]|sim|none`.

use std::path::{Path, PathBuf};
use std::str::FromStr;

/// USB vendor id of the probe (pid.codes, shared with firmware/app).
pub const PROBE_USB_VID: u16 = 0x1209;
/// USB product id of the probe (pid.codes test PID until one is allocated).
pub const PROBE_USB_PID: u16 = 0x0001;

/// Environment variable naming the probe simulator binary.
pub const SIM_ENV: &str = "THROTTLESCOPE_PROBE_SIM";

/// The probe a run uses.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ProbeSource {
    /// No probe: the run has no power or temperature data.
    #[default]
    None,
    /// A serial device path (e.g. `/dev/ttyACM0`).
    Port(PathBuf),
    /// The first USB serial device with the probe's VID/PID (and serial, if given).
    Auto {
        /// USB serial number to match, if any.
        serial: Option<String>,
    },
    /// The probe simulator on a pseudo-terminal (found as `link::sim_locate` says).
    Sim,
}

impl FromStr for ProbeSource {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "" => {
                return Err("empty --probe value (use PORT, auto, auto:SERIAL, sim or none)".into())
            }
            "none" => Self::None,
            "sim" => Self::Sim,
            "auto" => Self::Auto { serial: None },
            _ => match s.strip_prefix("auto:") {
                Some(serial) => Self::Auto {
                    serial: Some(serial.to_string()),
                },
                None => Self::Port(PathBuf::from(s)),
            },
        })
    }
}

impl std::fmt::Display for ProbeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::None => f.write_str("none"),
            Self::Sim => f.write_str("sim"),
            Self::Auto { serial: None } => f.write_str("auto"),
            Self::Auto { serial: Some(s) } => write!(f, "auto:{s}"),
            Self::Port(p) => write!(f, "{}", p.display()),
        }
    }
}

/// Finds the probe's serial device by USB VID/PID (and serial number).
/// Uses serialport's enumeration, which on Linux reads sysfs (no libudev).
pub fn discover(serial: Option<&str>) -> anyhow::Result<PathBuf> {
    // serialport's sysfs scan (no libudev) panics where /sys/class/tty is missing.
    #[cfg(target_os = "linux")]
    anyhow::ensure!(
        std::path::Path::new("/sys/class/tty").is_dir(),
        "cannot look for the probe: /sys/class/tty is missing (give the port with --probe PORT)"
    );
    let ports = serialport::available_ports()
        .map_err(|e| anyhow::anyhow!("could not list serial ports: {e}"))?;
    let mut seen = Vec::new();
    for port in ports {
        if let serialport::SerialPortType::UsbPort(usb) = &port.port_type {
            seen.push(format!(
                "{} ({:04x}:{:04x})",
                port.port_name, usb.vid, usb.pid
            ));
            let id_matches = usb.vid == PROBE_USB_VID && usb.pid == PROBE_USB_PID;
            let serial_matches =
                serial.is_none_or(|want| usb.serial_number.as_deref() == Some(want));
            if id_matches && serial_matches {
                return Ok(PathBuf::from(port.port_name));
            }
        }
    }
    anyhow::bail!(
        "no throttlescope probe (USB {PROBE_USB_VID:04x}:{PROBE_USB_PID:04x}{}) found; USB serial ports seen: {} — is it plugged in and flashed?",
        serial.map(|s| format!(", serial {s}")).unwrap_or_default(),
        if seen.is_empty() { "none".to_string() } else { seen.join(", ") }
    )
}

/// Checks, before anything is written, that the probe port `path` is there:
/// on Unix the device node exists; on Windows (where `COM5` is no file) the
/// port opens, and when it does not, the error names the ports there are.
pub fn check_port(path: &Path) -> anyhow::Result<()> {
    #[cfg(unix)]
    anyhow::ensure!(
        path.exists(),
        "probe port {} does not exist — is the probe plugged in? (`--probe auto` finds it by USB id)",
        path.display()
    );
    #[cfg(windows)]
    if let Err(e) = serialport::new(path.to_string_lossy(), 115_200).open() {
        anyhow::bail!(
            "cannot open the probe port {} ({}).{} Is the probe plugged in? (`--probe auto` finds it by USB id)",
            path.display(),
            e.to_string().trim_end_matches('.'),
            ports_there_are(path)
        );
    }
    Ok(())
}

/// On Windows, when `path` names a COM port that is not there: the ports
/// that are, for the error message (empty elsewhere, or when it is there).
pub(crate) fn ports_there_are(path: &Path) -> String {
    if !cfg!(windows) {
        return String::new();
    }
    let ports = serialport::available_ports().unwrap_or_default();
    let name = path.to_string_lossy();
    if ports
        .iter()
        .any(|p| p.port_name.eq_ignore_ascii_case(&name))
    {
        return String::new();
    }
    let names: Vec<&str> = ports.iter().map(|p| p.port_name.as_str()).collect();
    format!(
        " {name} does not exist; the COM ports there are: {}",
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(windows)]
    fn a_com_port_that_is_not_there_names_the_ports_that_are() {
        let e = check_port(Path::new("COM231")).unwrap_err().to_string();
        assert!(
            e.contains("COM231 does not exist; the COM ports there are: "),
            "{e}"
        );
        assert!(!e.contains("COM231,") && !e.ends_with("COM231."), "{e}");
    }

    #[test]
    fn parses_every_form() {
        assert_eq!("none".parse(), Ok(ProbeSource::None));
        assert_eq!("sim".parse(), Ok(ProbeSource::Sim));
        assert_eq!("auto".parse(), Ok(ProbeSource::Auto { serial: None }));
        assert_eq!(
            "auto:TS-42".parse(),
            Ok(ProbeSource::Auto {
                serial: Some("TS-42".into())
            })
        );
        assert_eq!(
            "/dev/ttyACM0".parse(),
            Ok(ProbeSource::Port("/dev/ttyACM0".into()))
        );
        assert!("".parse::<ProbeSource>().is_err());
        assert_eq!(
            ProbeSource::Auto {
                serial: Some("x".into())
            }
            .to_string(),
            "auto:x"
        );
    }

    #[test]
    fn discovery_without_a_probe_says_what_it_looked_for() {
        let err = discover(Some("no-such-probe-serial"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("1209:0001") || err.contains("/sys/class/tty"),
            "{err}"
        );
    }
}
