//! `TokenCounter`: the per-run token counter with its message cache and the background
//! build of the exact encoder (the policy is described in `tokens.rs`).

use std::fmt;
use std::thread::{self, JoinHandle};

use tiktoken_rs::CoreBPE;

use super::{
    Encoding, Fingerprint, encoding_for, estimate, family_factor, message_tokens, system_tokens,
    tools_tokens,
};
use crate::conversation::{Message, ToolSpec};

/// The encoder is built once the estimated request reaches this share of the threshold.
const WARM_PERCENT: u64 = 60;
/// New text above this size is tokenised on several threads.
const PARALLEL_MIN_BYTES: usize = 256 * 1024;
const MAX_THREADS: usize = 4;

/// Counts the tokens of a run's requests, incrementally (see the module header of `tokens`).
///
/// One counter per conversation: its cache follows one history. Counting another list of
/// messages through [`TokenCounter::count_history`] would replace that cache; use
/// [`TokenCounter::count_message`] for one-off counts.
pub struct TokenCounter {
    encoding: Encoding,
    factor: f64,
    threshold: u64,
    bpe: Option<&'static CoreBPE>,
    warmup: Warmup,
    /// One entry per message of the history last counted, in order.
    entries: Vec<Entry>,
    /// Set when the encoder arrived: estimated entries still need a recount.
    needs_upgrade: bool,
    system: Option<Entry>,
    tools: Option<Entry>,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    fp: Fingerprint,
    tokens: u64,
    exact: bool,
}

enum Warmup {
    NotStarted,
    Running(JoinHandle<Warmed>),
    Finished,
    Failed,
}

/// What the background thread hands back: the encoder and the exact counts of the
/// history snapshot it was given.
struct Warmed {
    bpe: &'static CoreBPE,
    counts: Vec<(Fingerprint, u64)>,
}

impl TokenCounter {
    /// A counter for `model` whose compaction threshold is `threshold` input tokens
    /// (0 when unknown: the encoder is then built on the first count).
    pub fn new(model: &str, threshold: u64) -> Self {
        TokenCounter {
            encoding: encoding_for(model),
            factor: family_factor(model),
            threshold,
            bpe: None,
            warmup: Warmup::NotStarted,
            entries: Vec::new(),
            needs_upgrade: false,
            system: None,
            tools: None,
        }
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// True once counts come from the BPE encoder rather than the estimate.
    pub fn is_exact(&self) -> bool {
        self.bpe.is_some()
    }

    /// True once the encoder build has been started (or has finished).
    pub fn warmup_started(&self) -> bool {
        !matches!(self.warmup, Warmup::NotStarted)
    }

    /// Tokens of a piece of text (no per-message overhead).
    pub fn count_text(&mut self, text: &str) -> u64 {
        self.poll();
        self.scale(self.base(text))
    }

    /// Tokens of one message with its overheads, not cached.
    pub fn count_message(&mut self, message: &Message) -> u64 {
        self.poll();
        self.scale(message_tokens(message, &|t| self.base(t)))
    }

    /// Tokens of the history, tokenising only messages not seen by the previous call.
    pub fn count_history(&mut self, history: &[Message]) -> u64 {
        self.settled(history, |c| c.history_total())
    }

    /// The token count of each message of `history` (as [`Self::count_history`] caches them).
    pub fn per_message(&mut self, history: &[Message]) -> Vec<u64> {
        self.count_history(history);
        self.entries.iter().map(|e| e.tokens).collect()
    }

    /// Tokens of a whole request: system prompt + history + tool list.
    pub fn count_request(&mut self, system: &str, history: &[Message], tools: &[ToolSpec]) -> u64 {
        self.settled(history, |c| {
            c.history_total() + c.system_total(system) + c.tools_total(tools)
        })
    }

    /// Forgets the cached message counts. Needed only after editing a message in the middle
    /// of the history in place: appends, front pruning and replacement are detected.
    pub fn forget_history(&mut self) {
        self.entries.clear();
    }

    /// Builds the encoder now if needed and waits for it (blocking, 0.1–0.3 s the first
    /// time). Returns whether counts are exact afterwards.
    pub fn wait_exact(&mut self) -> bool {
        if matches!(self.warmup, Warmup::NotStarted) {
            self.start_warmup(Vec::new(), Vec::new());
        }
        self.finish_warmup();
        self.bpe.is_some()
    }

    /// Syncs the cache with `history`, computes `total`, starts the encoder build when the
    /// total gets near the threshold, and never answers ≥ threshold from the estimate.
    fn settled(&mut self, history: &[Message], total: impl Fn(&mut Self) -> u64) -> u64 {
        self.poll();
        self.sync(history);
        let estimated = total(self);
        if self.bpe.is_some() {
            return estimated;
        }
        if estimated >= self.threshold.saturating_mul(WARM_PERCENT) / 100 && !self.warmup_started()
        {
            let fps = self.entries.iter().map(|e| e.fp).collect();
            self.start_warmup(history.to_vec(), fps);
        }
        if estimated >= self.threshold && self.wait_exact() {
            self.sync(history);
            return total(self);
        }
        estimated
    }

    fn base(&self, text: &str) -> u64 {
        match self.bpe {
            Some(bpe) => bpe.count_ordinary(text) as u64,
            None => estimate(text),
        }
    }

    fn scale(&self, tokens: u64) -> u64 {
        scale(tokens, self.factor)
    }

    fn history_total(&mut self) -> u64 {
        self.entries.iter().map(|e| e.tokens).sum()
    }

    fn system_total(&mut self, system: &str) -> u64 {
        let fp = Fingerprint::of_text(system);
        self.reuse(
            |c| &mut c.system,
            fp,
            |c| c.scale(system_tokens(system, &|t| c.base(t))),
        )
    }

    fn tools_total(&mut self, tools: &[ToolSpec]) -> u64 {
        let fp = Fingerprint::of_tools(tools);
        self.reuse(
            |c| &mut c.tools,
            fp,
            |c| c.scale(tools_tokens(tools, &|t| c.base(t))),
        )
    }

    /// The cached count in `slot` if it is for `fp` at the current precision, else `fresh`.
    fn reuse(
        &mut self,
        slot: fn(&mut Self) -> &mut Option<Entry>,
        fp: Fingerprint,
        fresh: impl Fn(&Self) -> u64,
    ) -> u64 {
        let exact = self.is_exact();
        if let Some(e) = slot(self).filter(|e| e.fp == fp && e.exact == exact) {
            return e.tokens;
        }
        let tokens = fresh(self);
        *slot(self) = Some(Entry { fp, tokens, exact });
        tokens
    }

    /// Makes `entries` describe `history`: keeps the still-valid cached prefix (also after
    /// the front was pruned), upgrades estimated entries once the encoder is there, and
    /// counts the new messages.
    fn sync(&mut self, history: &[Message]) {
        self.align(history);
        if let (Some(bpe), true) = (self.bpe, self.needs_upgrade) {
            for (entry, message) in self.entries.iter_mut().zip(history) {
                if !entry.exact {
                    entry.tokens = scale(exact_tokens(bpe, message), self.factor);
                    entry.exact = true;
                }
            }
            self.needs_upgrade = false;
        }
        let new = &history[self.entries.len()..];
        let counts = match self.bpe {
            Some(bpe) => exact_counts(bpe, self.factor, new),
            None => new
                .iter()
                .map(|m| self.scale(message_tokens(m, &estimate)))
                .collect(),
        };
        let exact = self.is_exact();
        for (message, tokens) in new.iter().zip(counts) {
            let fp = Fingerprint::of_message(message);
            self.entries.push(Entry { fp, tokens, exact });
        }
    }

    /// Drops the cached entries that no longer match `history`. Checks the first and the
    /// last cached message only (the history is append-only between compactions); a
    /// mismatch there falls back to a full prefix comparison.
    fn align(&mut self, history: &[Message]) {
        let (Some(first_entry), Some(first)) = (self.entries.first(), history.first()) else {
            self.entries.clear();
            return;
        };
        let fp = Fingerprint::of_message(first);
        if first_entry.fp != fp {
            match self.entries.iter().position(|e| e.fp == fp) {
                Some(pruned) => drop(self.entries.drain(..pruned)),
                None => return self.entries.clear(),
            }
        }
        self.entries.truncate(history.len());
        let last = self.entries.len() - 1;
        if self.entries[last].fp != Fingerprint::of_message(&history[last]) {
            let keep = self
                .entries
                .iter()
                .zip(history)
                .take_while(|(e, m)| e.fp == Fingerprint::of_message(m))
                .count();
            self.entries.truncate(keep);
        }
    }

    fn poll(&mut self) {
        if matches!(&self.warmup, Warmup::Running(h) if h.is_finished()) {
            self.finish_warmup();
        }
    }

    fn start_warmup(&mut self, snapshot: Vec<Message>, fps: Vec<Fingerprint>) {
        let (encoding, factor) = (self.encoding, self.factor);
        let spawned = thread::Builder::new()
            .name("token-encoder".into())
            .spawn(move || {
                let bpe = load(encoding);
                let counts = exact_counts(bpe, factor, &snapshot);
                Warmed {
                    bpe,
                    counts: fps.into_iter().zip(counts).collect(),
                }
            });
        self.warmup = match spawned {
            Ok(handle) => Warmup::Running(handle),
            Err(e) => {
                tracing::warn!(
                    "cannot start the tokenizer thread, token counts stay estimates: {e}"
                );
                Warmup::Failed
            }
        };
    }

    fn finish_warmup(&mut self) {
        let Warmup::Running(handle) = std::mem::replace(&mut self.warmup, Warmup::Finished) else {
            return;
        };
        let Ok(warmed) = handle.join() else {
            tracing::warn!("the tokenizer thread failed, token counts stay estimates");
            self.warmup = Warmup::Failed;
            return;
        };
        self.bpe = Some(warmed.bpe);
        for (entry, (fp, tokens)) in self.entries.iter_mut().zip(warmed.counts) {
            if entry.fp == fp {
                *entry = Entry {
                    fp,
                    tokens,
                    exact: true,
                };
            }
        }
        self.needs_upgrade = true;
    }
}

impl fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenCounter")
            .field("encoding", &self.encoding)
            .field("factor", &self.factor)
            .field("threshold", &self.threshold)
            .field("exact", &self.is_exact())
            .field("cached_messages", &self.entries.len())
            .finish_non_exhaustive()
    }
}

fn load(encoding: Encoding) -> &'static CoreBPE {
    match encoding {
        Encoding::Cl100k => tiktoken_rs::cl100k_base_singleton(),
        Encoding::O200k | Encoding::Estimate => tiktoken_rs::o200k_base_singleton(),
    }
}

fn scale(tokens: u64, factor: f64) -> u64 {
    if factor == 1.0 {
        tokens
    } else {
        (tokens as f64 * factor).ceil() as u64
    }
}

fn exact_tokens(bpe: &CoreBPE, message: &Message) -> u64 {
    message_tokens(message, &|t| bpe.count_ordinary(t) as u64)
}

/// Exact, scaled counts of `messages`, split over threads when there is a lot of text.
fn exact_counts(bpe: &'static CoreBPE, factor: f64, messages: &[Message]) -> Vec<u64> {
    let serial = |part: &[Message]| -> Vec<u64> {
        part.iter()
            .map(|m| scale(exact_tokens(bpe, m), factor))
            .collect()
    };
    let bytes: usize = messages.iter().map(|m| m.text().len()).sum();
    let threads = thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS));
    if bytes < PARALLEL_MIN_BYTES || threads < 2 || messages.len() < 2 {
        return serial(messages);
    }
    let parts = split_by_bytes(messages, bytes.div_ceil(threads));
    thread::scope(|scope| {
        let handles: Vec<_> = parts
            .iter()
            .map(|part| thread::Builder::new().spawn_scoped(scope, move || serial(part)))
            .collect();
        let mut out = Vec::with_capacity(messages.len());
        for (part, handle) in parts.iter().zip(handles) {
            match handle.map(|h| h.join()) {
                Ok(Ok(counts)) => out.extend(counts),
                _ => out.extend(serial(part)),
            }
        }
        out
    })
}

/// Consecutive slices of `messages` holding about `share` bytes of text each.
fn split_by_bytes(messages: &[Message], share: usize) -> Vec<&[Message]> {
    let mut parts = Vec::new();
    let (mut start, mut acc) = (0, 0);
    for (i, message) in messages.iter().enumerate() {
        acc += message.text().len();
        if acc >= share {
            parts.push(&messages[start..=i]);
            (start, acc) = (i + 1, 0);
        }
    }
    if start < messages.len() {
        parts.push(&messages[start..]);
    }
    parts
}
