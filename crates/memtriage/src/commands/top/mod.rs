//! `memtriage top`: the engine's sampler over every process, drawn live. The sampler
//! thread builds each frame (`usecase::top::LiveView`); this thread only reads keys and draws.
//! The terminal is restored however `top` ends: quit, an error, a panic, SIGTERM,
//! SIGHUP. `--once` and `--iterations N` print frames instead (JSON with `--json`).

use std::io::Write;
use std::sync::mpsc;
use std::time::Duration;

use anyhow::Context as _;
use memtriage_core::usecase::top::LiveView;
use memtriage_core::Root;
use ratatui::backend::{Backend, CrosstermBackend, TestBackend};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::crossterm::{execute, terminal};
use ratatui::Terminal;

use super::Context;
use crate::cli::TopArgs;
use crate::exit::ExitStatus;
use crate::render::printer::Printer;
use crate::render::top::app::{App, Key, Outcome};
use crate::render::top::draw::draw;

pub fn run(ctx: &Context, args: &TopArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let interval_ms = args.interval.0.as_millis() as u64;
    let mut app = App::new(
        args.sort,
        args.tree,
        args.filter.clone().unwrap_or_default(),
        interval_ms,
    );
    let window = args.window.0.as_secs_f64();
    if args.once || args.iterations.is_some() {
        return batch(ctx, args, &mut app, window, p);
    }
    // SAFETY: isatty only looks at the descriptors.
    if unsafe { libc::isatty(libc::STDIN_FILENO) == 0 || libc::isatty(libc::STDOUT_FILENO) == 0 } {
        anyhow::bail!(
            "top draws in a terminal, and stdin or stdout is not one; for scripts use \
             `memtriage top --once` or `--iterations N` (with --json for JSON)"
        );
    }
    let mut live = Some(start(&ctx.root, interval_ms, window)?);
    super::stop::install();
    let mut guard = TerminalGuard::enter()?;
    let outcome = (|| -> anyhow::Result<()> {
        let mut dirty = true;
        loop {
            if super::stop::requested() {
                return Ok(());
            }
            loop {
                let Some(view) = &live else {
                    return Err(anyhow::anyhow!("the sampler stopped"));
                };
                match view.frames().try_recv() {
                    Ok(frame) => {
                        app.show(frame);
                        dirty = true;
                    }
                    Err(mpsc::TryRecvError::Empty) => break,
                    // The sampler stopped: a bug on its side, said rather than a
                    // frozen screen.
                    Err(mpsc::TryRecvError::Disconnected) => {
                        return match live.take().map(LiveView::stop) {
                            Some(Err(e)) => Err(e.into()),
                            _ => Err(anyhow::anyhow!("the sampler stopped")),
                        };
                    }
                }
            }
            if dirty {
                // The detail pane's regions are read on the sampler's side.
                let pid = if app.detail {
                    app.selected_row().map_or(0, |r| r.pid)
                } else {
                    0
                };
                if let Some(view) = &live {
                    view.focus_on(pid);
                }
                guard.terminal.draw(|f| draw(f, &app))?;
                dirty = false;
            }
            // crossterm alone spins on a terminal that hung up (read returns 0 and it
            // reads again): past what crossterm already holds (keys read together, a
            // resize), the terminal itself is polled, and a hang-up ends `top`.
            if !event::poll(Duration::ZERO)? {
                match stdin_ready(Duration::from_millis(100)) {
                    Input::HungUp => return Ok(()),
                    Input::Idle => continue,
                    Input::Ready => {}
                }
            }
            while event::poll(Duration::ZERO)? {
                match event::read()? {
                    Event::Key(k) if k.kind != KeyEventKind::Release => {
                        dirty = true;
                        match app.key(key_of(k.code, k.modifiers)) {
                            Outcome::Quit => return Ok(()),
                            Outcome::Interval => {
                                drop(live.take());
                                live = Some(start(&ctx.root, app.interval_ms, window)?);
                            }
                            Outcome::Continue => {}
                        }
                    }
                    Event::Resize(..) => {
                        guard.terminal.autoresize()?;
                        dirty = true;
                    }
                    _ => {}
                }
            }
        }
    })();
    drop(guard);
    drop(live);
    outcome?;
    Ok(ExitStatus::Success)
}

enum Input {
    Ready,
    Idle,
    HungUp,
}

/// Whether the terminal has input within `timeout`, or has gone.
fn stdin_ready(timeout: Duration) -> Input {
    let mut fds = libc::pollfd {
        fd: libc::STDIN_FILENO,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one pollfd on the stack, for the call's duration.
    let n = unsafe { libc::poll(&mut fds, 1, timeout.as_millis() as libc::c_int) };
    if n < 0 {
        // EINTR (a signal): the loop checks for a stop next.
        return Input::Idle;
    }
    if fds.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
        return Input::HungUp;
    }
    if fds.revents & libc::POLLIN != 0 {
        Input::Ready
    } else {
        Input::Idle
    }
}

fn key_of(code: KeyCode, mods: KeyModifiers) -> Key {
    match code {
        KeyCode::Char('c') if mods.contains(KeyModifiers::CONTROL) => Key::CtrlC,
        // Ctrl-S is not `s`: control chords other than Ctrl-C do nothing.
        KeyCode::Char(_) if mods.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) => {
            Key::Other
        }
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Backspace => Key::Backspace,
        KeyCode::Tab => Key::Tab,
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::PageUp => Key::PageUp,
        KeyCode::PageDown => Key::PageDown,
        _ => Key::Other,
    }
}

/// The sampler over every process, each sample turned into a frame on its thread.
fn start(root: &Root, interval_ms: u64, window: f64) -> anyhow::Result<LiveView> {
    LiveView::start(root, Duration::from_millis(interval_ms), window)
        .context("cannot start the sampler")
}

/// `--once` (the second sample, so rates are known) or `--iterations N`, as JSON
/// lines with `--json`, else as the screen would show them ($COLUMNS, the terminal's
/// width, or 120 columns into a pipe).
fn batch(
    ctx: &Context,
    args: &TopArgs,
    app: &mut App,
    window: f64,
    p: &mut Printer,
) -> anyhow::Result<ExitStatus> {
    let live = start(&ctx.root, app.interval_ms, window)?;
    let wanted = args.iterations.unwrap_or(1);
    // The first sample has no rates yet: `--once` waits for the second.
    let skip = usize::from(args.once);
    for (i, frame) in live.frames().iter().enumerate() {
        if i < skip {
            continue;
        }
        if args.json {
            serde_json::to_writer(&mut p.out, &frame)?;
            writeln!(p.out)?;
        } else {
            app.frame = Some(frame);
            let width = p.out.width().unwrap_or(120);
            write!(p.out, "{}", screen(app, width)?)?;
        }
        p.out.flush()?;
        if i + 1 - skip >= wanted as usize {
            break;
        }
    }
    live.stop()?;
    Ok(ExitStatus::Success)
}

/// The view drawn off screen, as text.
pub fn screen(app: &App, width: usize) -> anyhow::Result<String> {
    let width = width.min(u16::MAX as usize) as u16;
    // Header, table header, every line (tree mode adds job lines), footer.
    let height = (3 + 1 + app.lines().len() + 1).min(u16::MAX as usize) as u16;
    let mut t = Terminal::new(TestBackend::new(width, height))?;
    t.draw(|f| draw(f, app))?;
    let buffer = t.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..buffer.area.height {
        let mut line = String::new();
        for x in 0..buffer.area.width {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let _ = t.backend_mut().flush();
    Ok(out)
}

/// Raw mode and the alternate screen, undone on drop and on panic.
struct TerminalGuard {
    terminal: Terminal<CrosstermBackend<std::io::Stdout>>,
}

impl TerminalGuard {
    fn enter() -> anyhow::Result<Self> {
        terminal::enable_raw_mode()
            .context("the terminal refused raw mode (is this a terminal?)")?;
        // From here on anything that fails restores the terminal.
        let restorer = Restorer;
        let mut stdout = std::io::stdout();
        execute!(stdout, terminal::EnterAlternateScreen)?;
        // Only a panic of the view's own thread restores the terminal: the sampler's
        // ends the sampler, which the view then reports.
        let view = std::thread::current().id();
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().id() == view {
                restore();
            }
            previous(info);
        }));
        let mut terminal = Terminal::new(CrosstermBackend::new(stdout))?;
        terminal.hide_cursor()?;
        terminal.clear()?;
        std::mem::forget(restorer);
        Ok(TerminalGuard { terminal })
    }
}

fn restore() {
    let _ = terminal::disable_raw_mode();
    let _ = execute!(
        std::io::stdout(),
        terminal::LeaveAlternateScreen,
        ratatui::crossterm::cursor::Show
    );
}

/// Restores the terminal if entering it fails half-way.
struct Restorer;

impl Drop for Restorer {
    fn drop(&mut self) {
        restore();
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}
