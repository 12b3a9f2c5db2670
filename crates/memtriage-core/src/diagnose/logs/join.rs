//! Reading a message that reaches over lines: a line a terminal cut at its width
//! (read whole before its pieces are read alone), and a line that held a rule's
//! literal and matched nothing (read again with the next line, in case a paste
//! wrapped it).

use super::engine::{self, Engine};
use super::{LogScanner, MAX_LINE, WRAP_MIN};

/// A line waiting to be read joined to the next, in case a terminal or a paste
/// wrapped the message.
#[derive(Debug, Clone)]
pub(super) struct PendingJoin {
    /// Where the message began.
    pub(super) line_no: u64,
    /// The line, or the pieces glued so far.
    pub(super) text: String,
    /// Pieces a terminal cut, not yet read alone: read so if the join matches nothing.
    pub(super) unread: Vec<(u64, String)>,
    /// What came before the first line (prose that quotes the message as an example).
    pub(super) context: Vec<u8>,
}

impl PendingJoin {
    /// A line that held a rule's literal and matched no rule.
    pub(super) fn unmatched(line_no: u64, line: String, context: &[u8]) -> PendingJoin {
        PendingJoin {
            line_no,
            text: line,
            unread: Vec::new(),
            context: context.to_vec(),
        }
    }

    /// A piece of the terminal's full width, as cut and as a line of its own.
    pub(super) fn cut(line_no: u64, piece: String, line: String, context: &[u8]) -> PendingJoin {
        PendingJoin {
            line_no,
            text: piece,
            unread: vec![(line_no, line)],
            context: context.to_vec(),
        }
    }
}

impl LogScanner {
    /// The rules over lines joined, read with what came before the first of them.
    pub(super) fn try_joined(
        &mut self,
        engine: &Engine,
        joined: &str,
        pending: &PendingJoin,
    ) -> bool {
        let here = std::mem::replace(&mut self.context, pending.context.clone());
        let matched = self.try_rules(engine, joined.as_bytes(), joined, pending.line_no);
        self.context = here;
        matched
    }

    /// The next piece of a line a terminal cut: glued on while the pieces go on, then
    /// the whole read; if it matches nothing, each piece is read as a line of its own.
    pub(super) fn join_cut_piece(
        &mut self,
        engine: &Engine,
        mut pending: PendingJoin,
        piece: String,
        line: String,
        line_no: u64,
        goes_on: bool,
    ) {
        // A prefix a tool put on every line (`[12345.678901] `) is no part of the message;
        // the spaces the terminal cut at are.
        let piece = engine::after_prefix(&piece).to_string();
        let whole = format!("{}{}", pending.text, piece.trim_end());
        if goes_on && whole.len() < MAX_LINE {
            pending.text.push_str(&piece);
            pending.unread.push((line_no, line));
            self.pending_join = Some(pending);
            return;
        }
        if self.try_joined(engine, &whole, &pending) {
            return;
        }
        let mut whole_had_literal = self.had_literal;
        // A prefix that takes the space after it (`[default0]: `, a timestamp's) may
        // have taken the one the terminal cut at.
        if !piece.starts_with(char::is_whitespace) {
            let spaced = format!("{} {}", pending.text, piece.trim_end());
            if self.try_joined(engine, &spaced, &pending) {
                return;
            }
            whole_had_literal |= self.had_literal;
        }
        pending.unread.push((line_no, line));
        let mut matched = false;
        for (no, piece) in std::mem::take(&mut pending.unread) {
            matched |= self.try_rules(engine, piece.as_bytes(), &piece, no);
        }
        // The message may go on in the next line still (a paste wrapped at words).
        if !matched && whole_had_literal && whole.len() >= WRAP_MIN {
            self.pending_join = Some(PendingJoin {
                text: whole,
                ..pending
            });
        }
    }

    /// Pieces of a cut line still waiting at the end of the input: each read alone.
    pub(super) fn read_unread_pieces(&mut self, engine: &Engine) {
        if let Some(pending) = self.pending_join.take() {
            for (no, piece) in pending.unread {
                self.try_rules(engine, piece.as_bytes(), &piece, no);
            }
        }
    }
}
