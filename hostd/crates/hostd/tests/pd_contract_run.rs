//! The USB PD contract from the probe to the run's records, over a real pseudo-terminal:
//! the probe simulator negotiates a contract on CC that the firmware core's decoder reads
//! (`firmware/sim/pd_line.c`), `hostd run` records its terms as the port's budget in the
//! manifest, and a contract the source renegotiates mid-run reaches the run's timeline
//! (`probe-link.jsonl`) and the budget the analysis judges the drive by.

mod common;
use common::{read_json, run_with_probe};
use hostd_records::port_budget::{BudgetSource, BudgetTimeline, PortBudget, MANIFEST_KEY};
use std::time::{Duration, Instant};

/// Waits (up to `limit`) until the run's file `name` has a line containing `what`.
fn wait_for(run: &std::path::Path, name: &str, what: &str, limit: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        let text = std::fs::read_to_string(run.join(name)).unwrap_or_default();
        if text.contains(what) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn a_contract_renegotiated_mid_run_reaches_the_runs_records() {
    // A Thunderbolt drive's 5 V 3 A contract (a USB4/TB drive always makes one).
    let sim_args = [
        "--pd-contract-v",
        "5",
        "--port-current-a",
        "3",
        "--idle-w",
        "3",
        "--active-w",
        "6",
    ];
    let mut began = false;
    let done = run_with_probe(
        "hostd-pd-contract",
        &sim_args,
        |_| {},
        |sim, run| {
            // Once the workload's phase has begun (every part started, the manifest's budget
            // taken) the source renegotiates.
            began = wait_for(
                run,
                "run-events.jsonl",
                "\"event\":\"phase_start\"",
                Duration::from_secs(60),
            );
            sim.command("contract 5 1.5");
        },
    );
    let run = done.run;
    assert!(began, "the run's phase never began");

    // The manifest: the contract the run started under is its budget, with its terms.
    let manifest = read_json(&run.join("manifest.json"));
    let start: PortBudget =
        serde_json::from_value(manifest["extra"]["probe"][MANIFEST_KEY].clone()).unwrap();
    assert_eq!(start.source, BudgetSource::PdContract, "{start:?}");
    assert_eq!(start.budget_w, Some(15.0));
    assert_eq!((start.contract_v, start.contract_a), (Some(5.0), Some(3.0)));
    assert_eq!(start.contract_supply.as_deref(), Some("fixed"));
    assert_eq!(start.contract_object, Some(1));
    assert!(start.contract_agreed_us.is_some());
    assert_eq!(start.describe(), "budget 15.0 W (PD contract 5 V 3 A)");
    assert_eq!(
        manifest["extra"]["probe"]["identity"]["pd_decoding"], true,
        "{}",
        manifest["extra"]["probe"]
    );

    // The timeline: the renegotiated contract, stamped with its PS_RDY on the probe's clock.
    let link_records = hostd_records::probe_link::read(&run).unwrap();
    let contracts: Vec<(i64, PortBudget)> = link_records
        .iter()
        .filter(|r| r.event == "port")
        .filter_map(|r| {
            let b: PortBudget = serde_json::from_value(r.nested.get(MANIFEST_KEY)?.clone()).ok()?;
            (b.source == BudgetSource::PdContract).then_some((r.time_ns, b))
        })
        .collect();
    let (changed_ns, after) = contracts
        .iter()
        .find(|(_, b)| b.contract_a == Some(1.5))
        .unwrap_or_else(|| panic!("no 5 V 1.5 A contract on the timeline: {contracts:?}"));
    assert_eq!(after.budget_w, Some(7.5));
    assert_eq!(after.describe(), "budget 7.5 W (PD contract 5 V 1.5 A)");
    assert!(after.contract_agreed_us > start.contract_agreed_us);

    // The budget over the run, as the analysis and the power rule read it: 15 W (3 A)
    // until the new contract, 7.5 W (1.5 A) from there — a port change.
    let timeline = BudgetTimeline::of_run(Some(&start), &link_records);
    assert_eq!(timeline.at(changed_ns - 1), Some(15.0));
    assert_eq!(timeline.current_at(changed_ns - 1), Some(3.0));
    assert_eq!(timeline.at(*changed_ns), Some(7.5));
    assert_eq!(timeline.current_at(*changed_ns), Some(1.5));
    assert_eq!(
        timeline.changes_in(i64::MIN + 1, i64::MAX),
        [(*changed_ns, Some(15.0), Some(7.5))]
    );
}
