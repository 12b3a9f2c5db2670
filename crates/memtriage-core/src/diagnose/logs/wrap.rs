//! Telling a log copied from a terminal that hard-wrapped its lines: every long line
//! was cut into pieces of exactly the terminal's width (`…Error in CuDNN: CU` /
//! `DNN_STATUS_ALLOC_FAILED`), so a message and its literals may be split anywhere.
//! Where the width is found, the scanner reads every line of the input's first
//! [`SAMPLE`] bytes and glues a piece of that width to the line after it. A paste is
//! that short; a log a program wrote is never cut so, and is read at full speed.

/// How much of the input's start is sampled for the width: a copied terminal is
/// wrapped from its first line, a log written by a program never is.
pub(super) const SAMPLE: usize = 64 << 10;
/// Narrower than this is not a terminal's width (a table's column, a short line).
const MIN_WIDTH: usize = 60;
/// The width terminals open at.
const DEFAULT_TERMINAL: usize = 80;
/// Lines longer than this are counted together: no terminal is that wide.
const MAX_WIDTH: usize = 1024;

/// The line lengths of the input's start, and the terminal width they show if any.
#[derive(Debug, Clone)]
pub(super) struct WrapWidth {
    lengths: Vec<u32>,
    /// By length, the lines followed by an empty line: a terminal's cut goes on in
    /// the next line, so no such length is the width.
    ended: Vec<u32>,
    sampled: usize,
    width: Option<usize>,
}

impl Default for WrapWidth {
    fn default() -> Self {
        WrapWidth {
            lengths: vec![0; MAX_WIDTH + 1],
            ended: vec![0; MAX_WIDTH + 1],
            sampled: 0,
            width: None,
        }
    }
}

impl WrapWidth {
    /// Counts the lines of `region` while the sample lasts, and says the width found
    /// and how many of the region's bytes lie in the sample (where it applies).
    pub(super) fn sample(&mut self, region: &[u8]) -> Option<(usize, usize)> {
        if self.sampled >= SAMPLE {
            return None;
        }
        let room = SAMPLE - self.sampled;
        let taken = &region[..region.len().min(room)];
        self.sampled += taken.len();
        // Only whole lines: the last one may go on past the sample. A progress bar
        // that redraws its line (`\r`) pads every state to one width: not counted.
        let mut lines = taken.split(|b| *b == b'\n').peekable();
        let mut previous = None;
        while let Some(line) = lines.next() {
            if lines.peek().is_none() && taken.len() < region.len() {
                break;
            }
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            // An empty line (not the nothing after the last newline; a pager pads its
            // empty lines to the width, so those are not empty) ends the one before.
            if line.is_empty() && lines.peek().is_some() {
                if let Some(length) = previous {
                    self.ended[length] += 1;
                }
            }
            previous = None;
            if !line.is_empty() && !line.contains(&b'\r') {
                let length = columns(line).min(MAX_WIDTH);
                self.lengths[length] += 1;
                previous = Some(length);
            }
        }
        self.width = self.decide();
        self.width.map(|w| (w, room))
    }

    /// A line longer than the width was found: the input was not cut at it.
    pub(super) fn refute(&mut self) {
        self.sampled = SAMPLE;
        self.width = None;
    }

    /// The longest length, when at least three lines have it and more lines than
    /// the ten lengths under it (text wrapped at words is ragged there; a terminal
    /// cuts every long line at exactly its width). 80 columns, the terminals'
    /// default, is taken from a single line (a short paste).
    fn decide(&self) -> Option<usize> {
        let width = self.lengths.iter().rposition(|n| *n > 0)?;
        if !(MIN_WIDTH..MAX_WIDTH).contains(&width) || self.ended[width] > 0 {
            return None;
        }
        let at = self.lengths[width];
        let under: u32 = self.lengths[width - 10..width].iter().sum();
        let shown = at >= 3 && at > under;
        let default_terminal = width == DEFAULT_TERMINAL && at >= under;
        (shown || default_terminal).then_some(width)
    }
}

/// The columns a line took on the terminal: its characters (UTF-8 continuation bytes
/// do not count), less the `> ` a markdown quote put before it when it was pasted.
pub(super) fn columns(line: &[u8]) -> usize {
    let line = line.strip_prefix(b"> ").unwrap_or(line);
    line.iter().filter(|b| (**b & 0xC0) != 0x80).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_copy_shows_its_width() {
        // Three lines of 120 columns cut at 80, and a short one between.
        let long = format!("{}\n{}\n", "x".repeat(80), "y".repeat(40));
        let text = format!("{long}short\n{long}{long}");
        let mut w = WrapWidth::default();
        assert_eq!(w.sample(text.as_bytes()).map(|(w, _)| w), Some(80));
    }

    #[test]
    fn a_programs_log_and_a_table_show_none() {
        let mut w = WrapWidth::default();
        let log: String = (0..200)
            .map(|i| {
                format!(
                    "step {i} loss {} lr 1e-4 {}\n",
                    i * 7 % 13,
                    "y".repeat(i % 50)
                )
            })
            .collect();
        assert_eq!(w.sample(log.as_bytes()), None);
        // Nor does a progress bar that redraws its line.
        let mut w = WrapWidth::default();
        let bar: String = (0..100)
            .map(|i| {
                format!(
                    "\rEpoch 3: {i:>3}%|####      | {i}/100 [00:49<01:40, 4.46it/s, loss=1.643]"
                )
            })
            .collect::<String>()
            + "\n";
        assert_eq!(w.sample(bar.repeat(3).as_bytes()), None);
        // Nor do a job's lines of one template, each followed by an empty line.
        let mut w = WrapWidth::default();
        let readings = format!("{}\n\n", "r".repeat(153)).repeat(3);
        assert_eq!(w.sample(readings.as_bytes()), None);
        // Two lines of one width are a table, not a terminal's cut.
        let mut w = WrapWidth::default();
        let table = format!("{}\n{}\n", "+".repeat(90), "|".repeat(90));
        assert_eq!(w.sample(table.as_bytes()), None);
    }

    #[test]
    fn past_the_sample_nothing_is_cut() {
        let mut w = WrapWidth::default();
        let wrapped = format!("{}\n", "z".repeat(80)).repeat(SAMPLE / 81 + 10);
        assert_eq!(w.sample(wrapped.as_bytes()), Some((80, SAMPLE)));
        assert_eq!(w.sample(wrapped.as_bytes()), None);
    }

    #[test]
    fn wide_characters_count_once() {
        assert_eq!(columns("已杀死".as_bytes()), 3);
        assert_eq!(columns(b"Killed"), 6);
        assert_eq!(columns(b"> Killed"), 6);
    }
}
