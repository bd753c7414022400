//! The live view: one progress bar per target with bytes, current rate (last
//! 2 s), mean rate and an ETA from the last 30 s (so it follows a throttled
//! drive on capacity-scale runs instead of the fast start), and a status line
//! from the run's parts (bus power and temperature from the probe).
//! A target that has not started says so; when the run ends each bar keeps
//! its whole-run mean. Everything the run prints while the bars are up (the
//! header, warnings) goes through the view, so no frame is drawn twice; log lines for
//! stderr suspend the bars (`crate::logging`).
//! An adaptive program's bar follows its clock instead (a duration run; a
//! paced sweep, "ETA ~" as its steps end on whole chunks), and a cache-recovery run,
//! whose end depends on the drive, shows bytes and elapsed time but no ETA.
//! Hidden when stdout is not a terminal or with `--quiet`.
//! Data and rates are written as the run's summary writes them (decimal GB and MB,
//! `hostd_records::published::Kind`). A run of simulated drives played N× faster
//! (`hostd_records::clock`) shows the modelled drive's rates and times; only the ETA is the
//! host's (the wait at the screen). Every line fits the terminal's width: a long label keeps
//! its end behind "…", a long message or status line is cut with "…".

use hostd_records::published::Kind;
use hostd_records::RunEvent;
use hostd_workload::runner::TargetProgress;
use hostd_workload::step::Goal;
use hostd_workload::Plan;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::collections::VecDeque;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Width of the target label column, at most (wider terminals give a quarter of their width).
const LABEL_WIDTH: usize = 20;
/// Width of a bar on a terminal wide enough.
const BAR_WIDTH: usize = 30;
/// Columns of a byte count ("100.0 GB").
const DATA_WIDTH: usize = 9;
/// The terminal's width in columns, asked at each refresh (it may be resized).
pub type Columns = Arc<dyn Fn() -> usize + Send + Sync>;
/// How often the bars are refreshed.
const TICK: Duration = Duration::from_millis(200);

/// The last 30 s of (time, bytes) of one target, for its current rate and ETA.
#[derive(Debug, Default, Clone)]
struct Track {
    history: VecDeque<(Instant, u64)>,
}

impl Track {
    fn observe(&mut self, now: Instant, bytes: u64) {
        self.history.push_back((now, bytes));
        while self.history.len() > 2
            && now.duration_since(self.history[0].0) > Duration::from_secs(30)
        {
            self.history.pop_front();
        }
    }

    /// Bytes per second over the last `secs` seconds.
    fn rate_since(&self, now: Instant, secs: u64) -> f64 {
        let Some(&(_, bytes)) = self.history.back() else {
            return 0.0;
        };
        let from = self
            .history
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
    }
}

/// Mean bytes per second of a target from its first phase to its end (or now).
fn mean_rate(p: &TargetProgress, bytes: u64) -> f64 {
    let secs = p.active_seconds();
    if secs > 0.0 {
        bytes as f64 / secs
    } else {
        0.0
    }
}

/// A rate in bytes per host second as the modelled drive's, for a drive played `factor`×
/// faster (it moves `factor`× its bytes per host second), written as the summary writes
/// rates.
fn modelled_rate(bps: f64, factor: f64) -> String {
    Kind::Rate.text(bps / factor)
}

/// The playback factor of the run's clock (1: real time; `hostd_records::clock`).
fn playback_factor() -> f64 {
    hostd_records::clock::playback().map_or(1.0, |p| p.factor)
}

/// Bytes as the summary writes them ("437 MB", "100.0 GB").
fn data(bytes: u64) -> String {
    Kind::Data.text(bytes as f64)
}

/// A target's goal in host time (a time goal is the modelled drive's time).
fn host_goal(goal: Goal) -> Goal {
    match goal {
        Goal::Time { run, approximate } => Goal::Time {
            run: hostd_records::clock::real_duration(run),
            approximate,
        },
        other => other,
    }
}

/// A bar's message: its fields, written two spaces apart.
#[derive(Debug, Clone, PartialEq)]
struct Message(Vec<String>);

impl Message {
    fn of(fields: &[&str]) -> Message {
        Message(fields.iter().map(|f| f.to_string()).collect())
    }

    /// The message in `n` characters: whole, or its first fields that fit and " …" (the
    /// first field cut where it must).
    fn fit(&self, n: usize) -> String {
        let whole = self.to_string();
        if whole.chars().count() <= n {
            return whole;
        }
        let mut out = String::new();
        for f in &self.0 {
            let next = if out.is_empty() {
                f.clone()
            } else {
                format!("{out}  {f}")
            };
            if next.chars().count() + 2 > n {
                break;
            }
            out = next;
        }
        if out.is_empty() {
            fit(&whole, n)
        } else {
            format!("{} …", out.trim_end())
        }
    }
}

impl std::fmt::Display for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.join("  "))
    }
}

/// The message beside one target's bar, for a drive played `factor`× faster: its rates and
/// times the modelled drive's.
fn bar_message(
    p: &TargetProgress,
    track: &Track,
    now: Instant,
    finished: bool,
    factor: f64,
) -> Message {
    let bytes = p.bytes.load(Ordering::Relaxed);
    let phase = p.phase.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let done = finished || p.done.load(Ordering::Relaxed);
    if phase.is_empty() && bytes == 0 {
        return Message::of(&[if done {
            "did not start"
        } else {
            "waiting to start"
        }]);
    }
    // The phase in a column of its own.
    let phase = format!("{phase:<9}");
    let moved = format!("{:>DATA_WIDTH$} moved", data(bytes));
    let mean = format!("mean {:>10}", modelled_rate(mean_rate(p, bytes), factor));
    if done {
        let took = format!("in {:.1} s", p.active_seconds() * factor);
        // A time bar does not show the bytes; the others do.
        return match host_goal(p.goal) {
            Goal::Time { .. } => Message::of(&["done     ", &moved, &took, &mean]),
            _ => Message::of(&["done     ", &took, &mean]),
        };
    }
    if bytes == 0 {
        return Message::of(&[&phase, "first file under way"]);
    }
    let now_rate = format!(
        "now {:>10}",
        modelled_rate(track.rate_since(now, 2), factor)
    );
    let elapsed = p.active_at(now);
    match host_goal(p.goal) {
        Goal::Bytes(total) => {
            let recent = track.rate_since(now, 30);
            let eta = if recent > 0.0 {
                format_eta(total.saturating_sub(bytes) as f64 / recent)
            } else {
                "--:--:--".into()
            };
            Message::of(&[&phase, &now_rate, &mean, &format!("ETA {eta}")])
        }
        Goal::Time { run, approximate } => {
            let left = if elapsed < run {
                format!(
                    "ETA {}{}",
                    if approximate { "~" } else { "" },
                    format_eta((run - elapsed).as_secs_f64())
                )
            } else if approximate {
                format!(
                    "{} past its planned time",
                    format_eta((elapsed - run).as_secs_f64() * factor)
                )
            } else {
                "time is up: finishing the last cycle".into()
            };
            Message::of(&[&phase, &moved, &now_rate, &mean, &left])
        }
        Goal::Open => Message::of(&[
            &phase,
            &now_rate,
            &mean,
            &format!(
                "{} elapsed, ends when it has measured enough",
                format_eta(elapsed.as_secs_f64() * factor)
            ),
        ]),
    }
}

/// Where the bar stands: bytes of a byte goal, milliseconds of a time goal.
fn bar_position(p: &TargetProgress, now: Instant) -> u64 {
    let bytes = p.bytes.load(Ordering::Relaxed);
    match host_goal(p.goal) {
        Goal::Bytes(total) => bytes.min(total),
        // A target that ended early (stopped, failed, a sweep's first miss)
        // keeps a partial bar, as a byte goal's would.
        Goal::Time { run, .. } => p.active_at(now).min(run).as_millis() as u64,
        Goal::Open => bytes,
    }
}

/// How a target's line is laid out on a terminal `cols` wide whose longest label is
/// `longest` characters: the label column, the bar and the room left for the message.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Layout {
    label: usize,
    bar: usize,
    message: usize,
}

/// Columns the message of a target in progress takes ("write      now  2.19 GB/s  mean
/// 1.17 GB/s  ETA 00:00:33"): the bar gives way to it on a narrow terminal.
const MESSAGE_WIDTH: usize = 58;

impl Layout {
    fn of(cols: usize, longest: usize, goal: Goal) -> Layout {
        let widest = if cols >= 120 {
            LABEL_WIDTH.max(cols / 4)
        } else {
            16
        };
        let label = longest.clamp(1, widest);
        let data = match goal {
            Goal::Bytes(_) => 2 * DATA_WIDTH + 2,
            Goal::Time { .. } => 0,
            Goal::Open => DATA_WIDTH + 7,
        };
        // The bar takes what the label, the data and the message leave, at most
        // BAR_WIDTH; under 10 columns, none. The last column stays empty.
        let bar = match cols
            .saturating_sub(label + data + 4 + MESSAGE_WIDTH)
            .min(BAR_WIDTH)
        {
            _ if matches!(goal, Goal::Open) => 0,
            b if b < 10 => 0,
            b => b,
        };
        let used = label + 1 + if bar > 0 { bar + 1 } else { 0 } + data + 1;
        Layout {
            label,
            bar,
            message: cols.saturating_sub(used + 1).max(10),
        }
    }
}

/// The bar's look: bytes of total for a byte goal, a time bar for a time goal, bytes alone
/// (no bar) for an open one; bytes as the summary writes them.
fn bar_style(goal: Goal, layout: Layout) -> ProgressStyle {
    let (label, bar) = (layout.label, layout.bar);
    let bar = if bar > 0 {
        format!("{{bar:{bar}}} ")
    } else {
        String::new()
    };
    let template = match goal {
        Goal::Bytes(_) => format!(
            "{{prefix:<{label}}} {bar}{{data:>{DATA_WIDTH}}}/{{total:<{DATA_WIDTH}}} {{msg}}"
        ),
        Goal::Time { .. } => format!("{{prefix:<{label}}} {bar}{{msg}}"),
        Goal::Open => format!("{{prefix:<{label}}} {{data:>{DATA_WIDTH}}} moved  {{msg}}"),
    };
    ProgressStyle::with_template(&template)
        .expect("valid template")
        .with_key("data", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = w.write_str(&data(s.pos()));
        })
        .with_key("total", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = w.write_str(&data(s.len().unwrap_or(0)));
        })
        .progress_chars("=> ")
}

/// `label` in `n` characters: a path keeps its end (which says most), another label (a
/// `sim:` scenario, a device) its start and its end, "…" between.
fn label_tail(label: &str, n: usize) -> String {
    let count = label.chars().count();
    if count <= n {
        return label.to_string();
    }
    let keep = n.saturating_sub(1);
    let head = if label.contains(['/', '\\']) {
        0
    } else {
        keep.div_ceil(2)
    };
    let start: String = label.chars().take(head).collect();
    let end: String = label.chars().skip(count - (keep - head)).collect();
    format!("{start}…{end}")
}

/// `text` in `n` characters: whole, or cut after its last field that fits (fields are
/// apart by two spaces or more) and ended with "…"; a first field longer than `n` is cut
/// where it must.
fn fit(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        return text.to_string();
    }
    let head: String = text.chars().take(n.saturating_sub(1)).collect();
    match head.trim_end().rfind("  ") {
        Some(at) if at > 0 => format!("{} …", head[..at].trim_end()),
        _ => format!("{head}…"),
    }
}

/// Lays the bars out for a terminal `cols` wide: their style and label.
fn lay_out(
    bars: &[ProgressBar],
    labels: &[String],
    progress: &[Arc<TargetProgress>],
    cols: usize,
) -> Vec<Layout> {
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(1);
    bars.iter()
        .zip(labels)
        .zip(progress)
        .map(|((b, label), p)| {
            let layout = Layout::of(cols, longest, p.goal);
            b.set_style(bar_style(p.goal, layout));
            b.set_prefix(label_tail(label, layout.label));
            layout
        })
        .collect()
}

/// Running live view.
pub struct LiveView {
    multi: Option<MultiProgress>,
    cols: Columns,
    bars: Vec<ProgressBar>,
    labels: Vec<String>,
    status: Option<ProgressBar>,
    progress: Vec<Arc<TargetProgress>>,
    stop: Arc<AtomicBool>,
    thread: Mutex<Option<JoinHandle<Vec<Track>>>>,
}

impl LiveView {
    /// Prints `header`, then starts drawing on the terminal (or, when hidden,
    /// only prints the header).
    pub fn start(
        plan: &Plan,
        progress: &[Arc<TargetProgress>],
        quiet: bool,
        header: &str,
    ) -> LiveView {
        let labels: Vec<String> = plan.targets.iter().map(|t| t.spec.label.clone()).collect();
        if quiet || !std::io::stdout().is_terminal() {
            outln!("{header}");
            return LiveView::hidden(labels, progress);
        }
        LiveView::start_on(
            ProgressDrawTarget::stdout_with_hz(5),
            Arc::new(|| usize::from(console::Term::stdout().size().1)),
            labels,
            progress,
            header,
        )
    }

    fn hidden(labels: Vec<String>, progress: &[Arc<TargetProgress>]) -> LiveView {
        LiveView {
            multi: None,
            cols: Arc::new(|| 80),
            bars: Vec::new(),
            labels,
            status: None,
            progress: progress.to_vec(),
            stop: Arc::new(AtomicBool::new(true)),
            thread: Mutex::new(None),
        }
    }

    /// The view drawn on `target`, `cols` columns wide, one bar per label.
    pub fn start_on(
        target: ProgressDrawTarget,
        cols: Columns,
        labels: Vec<String>,
        progress: &[Arc<TargetProgress>],
        header: &str,
    ) -> LiveView {
        let multi = MultiProgress::with_draw_target(target);
        // Before any bar exists: a line printed beside drawn bars would be
        // overdrawn and the first frame repeated.
        let _ = multi.println(header);
        let bars: Vec<ProgressBar> = progress
            .iter()
            .map(|p| {
                let b = ProgressBar::hidden();
                match host_goal(p.goal) {
                    Goal::Bytes(total) => b.set_length(total),
                    Goal::Time { run, .. } => b.set_length(run.as_millis() as u64),
                    Goal::Open => {}
                }
                b.set_message("waiting to start");
                multi.add(b)
            })
            .collect();
        let mut width = cols();
        let mut layouts = lay_out(&bars, &labels, progress, width);
        let status = multi.add(ProgressBar::hidden());
        // Log lines for stderr clear the bars and redraw them after.
        crate::logging::hold_bars(&multi);
        status.set_style(ProgressStyle::with_template("{msg}").expect("valid template"));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (bars, progress, stop) = (bars.clone(), progress.to_vec(), stop.clone());
            let (labels, cols) = (labels.clone(), cols.clone());
            std::thread::spawn(move || {
                let mut tracks = vec![Track::default(); bars.len()];
                while !stop.load(Ordering::Relaxed) {
                    let now = Instant::now();
                    if cols() != width {
                        width = cols();
                        layouts = lay_out(&bars, &labels, &progress, width);
                    }
                    for (((bar, p), track), layout) in
                        bars.iter().zip(&progress).zip(&mut tracks).zip(&layouts)
                    {
                        track.observe(now, p.bytes.load(Ordering::Relaxed));
                        bar.set_position(bar_position(p, now));
                        bar.set_message(
                            bar_message(p, track, now, false, playback_factor())
                                .fit(layout.message),
                        );
                    }
                    std::thread::sleep(TICK);
                }
                tracks
            })
        };
        LiveView {
            multi: Some(multi),
            cols,
            bars,
            labels,
            status: Some(status),
            progress: progress.to_vec(),
            stop,
            thread: Mutex::new(Some(thread)),
        }
    }

    /// Replaces the status line under the bars (one entry per part).
    pub fn set_status(&self, lines: &[String]) {
        if let Some(bar) = &self.status {
            let cols = (self.cols)().saturating_sub(1).max(10);
            bar.set_message(fit(&lines.join("   "), cols));
        }
    }

    /// Stops drawing and leaves the final frame: every bar full or where its
    /// target stopped, with the target's whole-run mean.
    pub fn finish(&self) {
        self.stop.store(true, Ordering::SeqCst);
        crate::logging::release_bars();
        let handle = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(tracks) = handle.and_then(|h| h.join().ok()) else {
            return;
        };
        let now = Instant::now();
        let layouts = lay_out(&self.bars, &self.labels, &self.progress, (self.cols)());
        for (((bar, p), track), layout) in self
            .bars
            .iter()
            .zip(&self.progress)
            .zip(&tracks)
            .zip(&layouts)
        {
            bar.set_position(bar_position(p, now));
            // Abandoned, not finished: a bar stays where its target stopped.
            bar.abandon_with_message(
                bar_message(p, track, now, true, playback_factor()).fit(layout.message),
            );
        }
        if let Some(bar) = &self.status {
            bar.finish();
        }
    }
}

impl Drop for LiveView {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        crate::logging::release_bars();
        if let Some(t) = self
            .thread
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            let _ = t.join();
        }
    }
}

impl LiveView {
    /// Follows the run's events (warnings above the bars, the phases in them).
    pub fn on_event(&self, ev: &RunEvent) {
        if let (
            Some(m),
            RunEvent::Warning {
                message,
                target_index,
            },
        ) = (&self.multi, ev)
        {
            // Say which target a warning is about: two targets often give the same one.
            let line = match target_index.and_then(|i| self.labels.get(i)) {
                Some(label) => format!("warning: {label}: {message}"),
                None => format!("warning: {message}"),
            };
            let _ = m.println(line);
        }
    }
}

fn format_eta(secs: f64) -> String {
    let s = secs.round() as u64;
    format!("{:02}:{:02}:{:02}", s / 3600, s % 3600 / 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use indicatif::{InMemoryTerm, TermLike};

    fn progress(total: u64) -> Arc<TargetProgress> {
        Arc::new(TargetProgress {
            goal: Goal::Bytes(total),
            ..Default::default()
        })
    }

    fn screen(term: &InMemoryTerm) -> String {
        term.contents()
    }

    /// The views of these tests register their bars globally for log lines: one at a time.
    static ONE_VIEW: Mutex<()> = Mutex::new(());

    /// A log line (e.g. "probe port lost") written while the bars are drawn lands once, on
    /// its own line above them, and the bars are drawn once under it.
    #[test]
    fn a_log_line_during_the_run_is_printed_once_above_the_bars() {
        let _one = ONE_VIEW.lock().unwrap_or_else(|e| e.into_inner());
        let term = InMemoryTerm::new(30, 160);
        let target = ProgressDrawTarget::term_like_with_hz(Box::new(term.clone()), 20);
        let a = progress(100_000_000);
        let view = LiveView::start_on(
            target,
            Arc::new(|| 160),
            vec!["/mnt/fast".into()],
            std::slice::from_ref(&a),
            "run R",
        );
        a.enter_phase("write");
        a.bytes.fetch_add(10_000_000, Ordering::Relaxed);
        std::thread::sleep(TICK * 2);
        let line = " WARN probe port /dev/ttyACM0 lost: unplugged";
        crate::logging::around_bars(|| term.write_line(line)).unwrap();
        a.bytes.fetch_add(10_000_000, Ordering::Relaxed);
        std::thread::sleep(TICK * 3);
        let mid = screen(&term);
        view.finish();
        for s in [mid, screen(&term)] {
            assert_eq!(s.matches("WARN probe port").count(), 1, "{s}");
            assert_eq!(s.matches("/mnt/fast ").count(), 1, "{s}");
            let lines: Vec<&str> = s.lines().collect();
            let warn = lines
                .iter()
                .position(|l| l.trim_end() == line)
                .unwrap_or_else(|| panic!("{s}"));
            let bar = lines
                .iter()
                .position(|l| l.starts_with("/mnt/fast"))
                .unwrap();
            assert!(warn < bar, "the line goes above the bars:\n{s}");
        }
    }

    /// A run of two targets on an in-memory 160×30 terminal: the first
    /// writes while the second waits, then both finish.
    #[test]
    fn a_run_on_the_terminal_reads_cleanly_from_first_to_last_frame() {
        let _one = ONE_VIEW.lock().unwrap_or_else(|e| e.into_inner());
        let term = InMemoryTerm::new(30, 160);
        let target = ProgressDrawTarget::term_like_with_hz(Box::new(term.clone()), 20);
        let (a, b) = (progress(100_000_000), progress(50_000_000));
        let view = LiveView::start_on(
            target,
            Arc::new(|| 160),
            vec!["/mnt/fast".into(), "/mnt/slow".into()],
            &[a.clone(), b.clone()],
            "run R: profile quick, 2 target(s), results in runs/R",
        );
        for i in 0..2 {
            view.on_event(&RunEvent::Warning {
                target_index: Some(i),
                message: "played 10× faster than real time: rates ×10".into(),
            });
        }
        a.enter_phase("write");
        for _ in 0..5 {
            a.bytes.fetch_add(10_000_000, Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(150));
        }
        std::thread::sleep(TICK * 2);
        let mid = screen(&term);
        let line_of = |s: &str, label: &str| {
            s.lines()
                .find(|l| l.starts_with(label))
                .unwrap_or_else(|| panic!("no line for {label}:\n{s}"))
                .to_string()
        };
        let slow = line_of(&mid, "/mnt/slow");
        assert!(slow.contains("waiting to start"), "{mid}");
        assert!(!slow.contains("ETA"), "a waiting target has no ETA:\n{mid}");
        assert!(line_of(&mid, "/mnt/fast").contains("write"), "{mid}");
        a.bytes.fetch_add(50_000_000, Ordering::Relaxed);
        a.mark_done();
        b.enter_phase("write");
        b.bytes.fetch_add(50_000_000, Ordering::Relaxed);
        std::thread::sleep(TICK * 2);
        b.mark_done();
        view.finish();
        let last = screen(&term);
        // Everything once: the header, each warning, each bar.
        for needle in [
            "run R: profile quick",
            "warning: /mnt/fast: played 10×",
            "warning: /mnt/slow: played 10×",
            "/mnt/fast ",
            "/mnt/slow ",
        ] {
            assert_eq!(last.matches(needle).count(), 1, "{needle:?}:\n{last}");
        }
        for label in ["/mnt/fast", "/mnt/slow"] {
            let line = line_of(&last, label);
            assert!(line.contains("done") && line.contains(" s  mean"), "{line}");
            assert!(
                !line.contains(" 0 MB/s"),
                "the whole-run mean belongs here: {line}"
            );
        }
        // 100 MB over ~0.75 s of writing: the mean is that, not zero; in the summary's units.
        let fast = line_of(&last, "/mnt/fast");
        let mean: Vec<&str> = fast
            .split("mean")
            .nth(1)
            .map(|s| s.split_whitespace().take(2).collect())
            .unwrap_or_else(|| panic!("{fast}"));
        let mb_s = match mean[..] {
            [v, "MB/s"] => v.parse::<f64>().unwrap(),
            [v, "GB/s"] => 1e3 * v.parse::<f64>().unwrap(),
            _ => panic!("{fast}"),
        };
        assert!((60.0..250.0).contains(&mb_s), "{fast}");
        assert!(
            fast.contains("100 MB/100 MB"),
            "decimal bytes, as the summary: {fast}"
        );
        assert!(!last.contains("iB"), "{last}");
    }

    /// A drive played 5× faster: its bar says the modelled drive's time beside the
    /// modelled drive's rate (issue 40: "done in 31.6 s mean 633 MB/s" paired host seconds
    /// with the modelled rate), and the rate times the time is the data moved.
    #[test]
    fn a_drive_played_faster_reads_in_its_own_time_and_rate() {
        let (p, track, now) = started(Goal::Bytes(100_000_000_000), 20, 50_000_000_000);
        p.mark_done();
        let m = bar_message(&p, &track, now, true, 5.0).to_string();
        let secs: f64 = m
            .split("in ")
            .nth(1)
            .and_then(|s| s.split(" s").next())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or_else(|| panic!("{m}"));
        assert!((99.0..=102.0).contains(&secs), "the modelled 100 s: {m}");
        assert!(m.contains("mean  0.50 GB/s"), "50 GB in 100 s: {m}");
    }

    /// On a terminal 80 columns wide every line of the view fits: a long label keeps its end
    /// behind "…", the message and the status line end in "…" where cut, and nothing is cut
    /// by the terminal mid-word.
    #[test]
    fn every_line_fits_a_narrow_terminal() {
        let _one = ONE_VIEW.lock().unwrap_or_else(|e| e.into_inner());
        let term = InMemoryTerm::new(30, 80);
        let target = ProgressDrawTarget::term_like_with_hz(Box::new(term.clone()), 20);
        let a = progress(100_000_000_000);
        let label = "/var/tmp/throttlescope-demo.AbC123/a-rather-long-target-name";
        let view = LiveView::start_on(
            target,
            Arc::new(|| 80),
            vec![label.into()],
            std::slice::from_ref(&a),
            "run R",
        );
        a.enter_phase("write");
        a.bytes.fetch_add(40_000_000_000, Ordering::Relaxed);
        view.set_status(&[
            "probe: 8.20 W  5.00 V  enclosure 55.0 °C  die 30.1 °C  gaps 0  reconnects 0  budget 15.0 W, headroom 6.80 W (45 %)".into(),
        ]);
        std::thread::sleep(TICK * 3);
        let mid = screen(&term);
        view.finish();
        for s in [mid, screen(&term)] {
            for line in s.lines() {
                assert!(line.trim_end().chars().count() < 80, "{line:?}\n{s}");
            }
            let bar = s
                .lines()
                .find(|l| l.starts_with('…'))
                .unwrap_or_else(|| panic!("{s}"));
            assert!(
                bar.contains("target-name") && bar.contains("40.0 GB/100.0 GB"),
                "{s}"
            );
            let status = s.lines().find(|l| l.starts_with("probe:")).unwrap();
            assert!(status.trim_end().ends_with('…'), "{s}");
        }
    }

    #[test]
    fn long_labels_keep_their_end() {
        assert_eq!(label_tail("/short", 20), "/short");
        let t = label_tail("/var/tmp/throttlescope-demo.AbC123/target", 20);
        assert_eq!(t.chars().count(), 20);
        assert!(t.starts_with('…') && t.ends_with("AbC123/target"), "{t}");
        // A simulated drive keeps its scheme and its factor.
        assert_eq!(label_tail("sim:tb-ssd-4w5-port*5", 16), "sim:tb-s…-port*5");
    }

    /// A message too long for its room keeps its first whole fields: a rate is never cut
    /// from its unit or its name.
    #[test]
    fn a_long_message_keeps_its_first_whole_fields() {
        let m = Message::of(&[
            "write    ",
            "now  0.97 GB/s",
            "mean  0.97 GB/s",
            "ETA 00:00:20",
        ]);
        assert_eq!(
            m.fit(80),
            "write      now  0.97 GB/s  mean  0.97 GB/s  ETA 00:00:20"
        );
        assert_eq!(m.fit(45), "write      now  0.97 GB/s  mean  0.97 GB/s …");
        assert_eq!(m.fit(40), "write      now  0.97 GB/s …");
        assert_eq!(
            Message::of(&["a-very-long-phase-name"]).fit(10),
            "a-very-lo…"
        );
    }

    /// A target that started `secs` ago with `bytes` moved.
    fn started(goal: Goal, secs: u64, bytes: u64) -> (TargetProgress, Track, Instant) {
        let p = TargetProgress {
            goal,
            ..Default::default()
        };
        let now = Instant::now();
        let t0 = now - Duration::from_secs(secs);
        p.started.set(t0).unwrap();
        *p.phase.lock().unwrap() = "cycle3".into();
        p.bytes.store(bytes, Ordering::Relaxed);
        let mut track = Track::default();
        track.observe(t0, 0);
        track.observe(now, bytes);
        (p, track, now)
    }

    #[test]
    fn a_duration_run_counts_down_its_time_not_a_byte_total() {
        // 8 h asked, 2 h gone: 6 h left whatever the rate, and the bar a quarter full.
        let goal = Goal::Time {
            run: Duration::from_secs(8 * 3600),
            approximate: false,
        };
        let (p, track, now) = started(goal, 2 * 3600, 3_000_000_000_000);
        let m = bar_message(&p, &track, now, false, 1.0).to_string();
        assert!(m.contains("ETA 06:00:00"), "{m}");
        assert!(m.contains("3000.0 GB moved"), "{m}");
        assert_eq!(bar_position(&p, now), 2 * 3600 * 1000);
        let sweep = Goal::Time {
            run: Duration::from_secs(50),
            approximate: true,
        };
        let (p, track, now) = started(sweep, 20, 1_000_000_000);
        let m = bar_message(&p, &track, now, false, 1.0).to_string();
        assert!(m.contains("ETA ~00:00:30"), "{m}");
        p.mark_done();
        let m = bar_message(&p, &track, now, true, 1.0).to_string();
        assert!(m.contains("1.0 GB moved  in "), "{m}");
        // Stopped after 20 s of 50: the bar stays where it was.
        let at = bar_position(&p, Instant::now());
        assert!((20_000..21_000).contains(&at), "{at}");
        // Past the time: no ETA of zero for the rest of the run.
        let (p, track, now) = started(goal, 9 * 3600, 1);
        let m = bar_message(&p, &track, now, false, 1.0).to_string();
        assert!(
            m.contains("time is up: finishing the last cycle") && !m.contains("ETA"),
            "{m}"
        );
        let (p, track, now) = started(sweep, 65, 1);
        let m = bar_message(&p, &track, now, false, 1.0).to_string();
        assert!(m.contains("00:00:15 past its planned time"), "{m}");
    }

    #[test]
    fn a_cache_recovery_run_has_no_eta_and_no_byte_total() {
        let (p, track, now) = started(Goal::Open, 75, 40_000_000_000);
        let m = bar_message(&p, &track, now, false, 1.0).to_string();
        assert!(!m.contains("ETA"), "its end depends on the drive: {m}");
        assert!(m.contains("00:01:15 elapsed"), "{m}");
        assert_eq!(bar_position(&p, now), 40_000_000_000);
    }
}
