//! Reaping: memtriage is the subreaper of the job's tree, so every process of it that
//! ends (orphans included) is reaped by one thread, with the kernel's accounting, and
//! reaches the run loop as an event in the order it happened.

use std::sync::mpsc::{self, Receiver, Sender};

use super::child::{self, Reaped};
use super::Event;

/// Starts reaping every child as it ends; [`Event::ReaperDone`] once none is left.
pub(super) fn start(events: &Sender<Event>) {
    let (reaped_tx, reaped_rx) = mpsc::channel();
    std::thread::spawn(move || child::reap_all(reaped_tx));
    let events = events.clone();
    std::thread::spawn(move || {
        for r in reaped_rx {
            if events.send(Event::Reaped(r)).is_err() {
                return;
            }
        }
        let _ = events.send(Event::ReaperDone);
    });
}

/// Exits that arrived after the sampler stopped, while the output drained.
pub(super) fn late_exits(arrived: &Receiver<Event>, reaped: &mut Vec<Reaped>) {
    while let Ok(event) = arrived.try_recv() {
        if let Event::Reaped(r) = event {
            reaped.push(r);
        }
    }
}
