//! The live view: one progress bar per target with bytes, current rate (last
//! 2 s), mean rate and an ETA from the last 30 s (so it follows a throttled
//! drive on capacity-scale runs instead of the fast start), and a status line
//! from the run's components (bus power and temperature from the probe).
//! Hidden when stdout is not a terminal or with `--quiet`.

use hostd_workload::events::{RunEvent, RunObserver};
use hostd_workload::runner::TargetProgress;
use hostd_workload::Plan;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::VecDeque;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Running live view.
pub struct LiveView {
    multi: Option<MultiProgress>,
    status: Option<ProgressBar>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl LiveView {
    /// Starts drawing (or does nothing when hidden).
    pub fn start(plan: &Plan, progress: &[Arc<TargetProgress>], quiet: bool) -> LiveView {
        let stop = Arc::new(AtomicBool::new(false));
        if quiet || !std::io::stdout().is_terminal() {
            return LiveView {
                multi: None,
                status: None,
                stop,
                thread: None,
            };
        }
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stdout_with_hz(5));
        let style = ProgressStyle::with_template(
            "{prefix:<20} {bar:30} {bytes:>10}/{total_bytes:<10} {msg}",
        )
        .expect("valid template")
        .progress_chars("=> ");
        let bars: Vec<ProgressBar> = plan
            .targets
            .iter()
            .map(|t| {
                let b = multi.add(ProgressBar::new(t.bytes_moved()));
                b.set_style(style.clone());
                b.set_prefix(
                    t.spec
                        .label
                        .chars()
                        .rev()
                        .take(20)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect::<String>(),
                );
                b
            })
            .collect();
        let status = multi.add(ProgressBar::new_spinner());
        status.set_style(ProgressStyle::with_template("{msg}").expect("valid template"));
        let progress: Vec<Arc<TargetProgress>> = progress.to_vec();
        let stop2 = stop.clone();
        let thread = std::thread::spawn(move || {
            let start = Instant::now();
            let mut history: Vec<VecDeque<(Instant, u64)>> = vec![VecDeque::new(); bars.len()];
            while !stop2.load(Ordering::Relaxed) {
                let now = Instant::now();
                for (i, bar) in bars.iter().enumerate() {
                    let p = &progress[i];
                    let bytes = p.bytes.load(Ordering::Relaxed);
                    let h = &mut history[i];
                    h.push_back((now, bytes));
                    while h.len() > 2 && now.duration_since(h[0].0) > Duration::from_secs(30) {
                        h.pop_front();
                    }
                    bar.set_position(bytes.min(p.total));
                    let rate_since = |secs: u64| {
                        let from = h
                            .iter()
                            .find(|(t, _)| now.duration_since(*t) <= Duration::from_secs(secs))
                            .copied()
                            .unwrap_or((now, bytes));
                        let dt = now.duration_since(from.0).as_secs_f64();
                        if dt > 0.0 {
                            (bytes - from.1) as f64 / dt
                        } else {
                            0.0
                        }
                    };
                    let current = rate_since(2);
                    let recent = rate_since(30);
                    let mean = bytes as f64 / start.elapsed().as_secs_f64().max(1e-3);
                    let phase = p.phase.lock().unwrap().clone();
                    let eta = if p.done.load(Ordering::Relaxed) {
                        "done".to_string()
                    } else if recent > 0.0 {
                        format_eta(p.total.saturating_sub(bytes) as f64 / recent)
                    } else {
                        "--:--:--".into()
                    };
                    bar.set_message(format!(
                        "{phase:<10} now {:>6.0} MB/s  mean {:>6.0} MB/s  ETA {eta}",
                        current / 1e6,
                        mean / 1e6
                    ));
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            for b in bars {
                b.finish();
            }
        });
        LiveView {
            multi: Some(multi),
            status: Some(status),
            stop,
            thread: Some(thread),
        }
    }

    /// Replaces the status line under the bars (one entry per component).
    pub fn set_status(&self, lines: &[String]) {
        if let Some(bar) = &self.status {
            bar.set_message(lines.join("   "));
        }
    }

    /// Stops drawing.
    pub fn finish(&self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(bar) = &self.status {
            bar.finish();
        }
    }
}

impl Drop for LiveView {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl RunObserver for LiveView {
    fn on_event(&self, ev: &RunEvent) {
        if let (Some(m), RunEvent::Warning { message, .. }) = (&self.multi, ev) {
            let _ = m.println(format!("warning: {message}"));
        }
    }
}

fn format_eta(secs: f64) -> String {
    let s = secs.round() as u64;
    format!("{:02}:{:02}:{:02}", s / 3600, s % 3600 / 60, s % 60)
}
