//! The scenario model's host port: a current it allows (the budget), an optional PD
//! contract voltage and a cable between the probe and the drive. The probe plugs into the
//! host port: it sees the port's VBUS and the cable's loss, the drive at the cable's far end
//! gets VBUS − I·R; a drive that needs more than the budget is held at it and its rate falls
//! in proportion; without a port model nothing changes.

use hostd_scenario::device::samples;
use hostd_scenario::{load, simulate, Scenario};

fn steady_with(port: &str) -> Scenario {
    let text = hostd_scenario::BUILT_IN
        .iter()
        .find(|(n, _)| *n == "steady")
        .unwrap()
        .1
        .replace("tau_s = 60.0\n", &format!("tau_s = 60.0\n{port}"));
    Scenario::from_toml(&text).unwrap()
}

#[test]
fn a_drive_over_the_budget_is_held_at_it_and_a_cable_beyond_the_probe_drops_where_it_cannot_see() {
    let sc = steady_with("port_current_a = 0.9\ncable_mohm = 200.0\n");
    let dev = sc.device;
    // 6.5 W asked at the drive: 0.9 A. The probe, at the port, sees 5.0 V and 4.5 W; the
    // drive, beyond 200 mΩ, gets 4.82 V and 4.338 W.
    let d = dev.port_draw(dev.power_w(1.0));
    assert!(d.held);
    assert!((d.current_a - 0.9).abs() < 1e-12);
    assert!((d.vbus_v - 5.0).abs() < 1e-12);
    assert!((d.power_w - 4.5).abs() < 1e-9);
    assert!((d.drive_w - 4.338).abs() < 1e-9);
    assert!((d.rate_factor - 4.338 / 6.5).abs() < 1e-9);
    assert!((dev.probe_w(1.0) - 4.5).abs() < 1e-9);
    assert!((dev.delivered_w(1.0) - 4.338).abs() < 1e-9);
    // Idle (2.5 W) fits: I solves 2.5 = (5 − I·R)·I at the drive, below the budget; the
    // probe sees 5 V × I, the cable's loss included.
    let idle = dev.port_draw(dev.power_w(0.0));
    assert!(!idle.held);
    assert!(((5.0 - 0.2 * idle.current_a) * idle.current_a - 2.5).abs() < 1e-9);
    assert!((idle.drive_w - 2.5).abs() < 1e-9);
    assert!((idle.vbus_v - 5.0).abs() < 1e-12);
    assert!((idle.power_w - 5.0 * idle.current_a).abs() < 1e-12);
    // The probe simulator gets the same port.
    let args = dev.probe_sim_args().join(" ");
    assert!(args.contains("--port-current-a 0.9"), "{args}");
    assert!(args.contains("--cable-mohm 200"), "{args}");
    assert!(!args.contains("--pd-contract-v"), "{args}");
    // ... and starts its enclosure where the scenario's model starts it.
    let initial = format!("--initial-c {}", dev.start_temp_c());
    assert!(args.contains(&initial), "{args}");
}

#[test]
fn a_pd_contract_sets_the_source_voltage() {
    let sc = steady_with("port_current_a = 3.0\npd_contract_v = 9.0\n");
    let d = sc.device.port_draw(6.5);
    assert!(!d.held);
    assert!((d.vbus_v - 9.0).abs() < 1e-12);
    assert!((d.current_a - 6.5 / 9.0).abs() < 1e-12);
    assert!(sc
        .device
        .probe_sim_args()
        .join(" ")
        .contains("--pd-contract-v 9"));
}

#[test]
fn the_held_drive_takes_longer_in_proportion_and_its_power_is_flat_at_the_budget() {
    let free = load("steady").unwrap();
    let held = steady_with("port_current_a = 0.9\n");
    let factor = held.device.port_rate_factor(1.0);
    assert!((factor - 4.5 / 6.5).abs() < 1e-9);
    let (t_free, t_held) = (simulate(&free).end_ns, simulate(&held).end_ns);
    let ratio = t_held as f64 / t_free as f64;
    // Per-file overheads (2 ms) do not stretch; the transfer does.
    assert!(
        (ratio - 1.0 / factor).abs() < 0.02 * (1.0 / factor),
        "ratio {ratio}"
    );

    let trace = simulate(&held);
    let mut busy = Vec::new();
    samples(&held.device, &trace, 10.0, 0.0, 0.0, 1, |s| {
        if trace.load_at(s.t_ns) == 1.0 {
            busy.push((s.power_w, s.vbus_v));
        }
    });
    assert!(busy.len() > 100);
    let mean = busy.iter().map(|b| b.0).sum::<f64>() / busy.len() as f64;
    assert!((mean - 4.5).abs() < 0.02, "mean busy power {mean} W");
    assert!(
        busy.iter().all(|b| b.0 <= 4.5 * 1.016),
        "power above the budget"
    );
    assert!(
        busy.iter().all(|b| (b.1 - 5.0).abs() < 0.003),
        "no cable: no sag"
    );
}

#[test]
fn without_a_port_model_nothing_changes() {
    let sc = load("steady").unwrap();
    assert!(!sc.device.has_port());
    for l in [0.0, 0.5, 1.0] {
        assert_eq!(sc.device.delivered_w(l), sc.device.power_w(l));
        assert_eq!(sc.device.port_rate_factor(l), 1.0);
    }
    assert!(!sc.device.probe_sim_args().join(" ").contains("--port"));
}

#[test]
fn a_port_outside_what_the_simulator_takes_is_refused_by_name() {
    for bad in [
        "port_current_a = 0.0\n",
        "port_current_a = 6.0\n",
        "pd_contract_v = 60.0\n",
        "cable_mohm = -1.0\n",
    ] {
        let text = hostd_scenario::BUILT_IN
            .iter()
            .find(|(n, _)| *n == "steady")
            .unwrap()
            .1
            .replace("tau_s = 60.0\n", &format!("tau_s = 60.0\n{bad}"));
        let err = Scenario::from_toml(&text).unwrap_err().to_string();
        assert!(err.contains("port_current_a must be"), "{bad}: {err}");
    }
}
