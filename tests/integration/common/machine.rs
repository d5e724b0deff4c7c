//! The machine the tests run on, held by each test through its scratch directory. Tests
//! of every file run at once in one binary, and a core kept busy by another test leaves
//! a paced run short of its rate, or a bounded wait past its bound: a test that judges a
//! rate or a time holds the machine alone, or, when its own load is light (a fraction of
//! a core), with one other such test, which leaves each of them a core.

use std::sync::{Condvar, Mutex};

/// How a test holds the machine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Hold {
    /// With any number of other sharing tests.
    Shared,
    /// With at most one other paired test, and no other kind.
    Paired,
    /// With no other test.
    Alone,
}

impl Hold {
    /// How many tests may hold the machine this way at once.
    fn room(self) -> usize {
        match self {
            Hold::Shared => usize::MAX,
            Hold::Paired => 2,
            Hold::Alone => 1,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Hold::Shared => "shared",
            Hold::Paired => "paired",
            Hold::Alone => "alone",
        }
    }
}

/// Who holds the machine now: one way, by how many tests.
struct Holders {
    hold: Option<Hold>,
    count: usize,
}

static HOLDERS: Mutex<Holders> = Mutex::new(Holders { hold: None, count: 0 });
static RELEASED: Condvar = Condvar::new();

/// The machine held one way until dropped.
pub struct Held(Hold);

impl Held {
    pub fn hold(&self) -> Hold {
        self.0
    }
}

/// Waits until the machine may be held as `hold` (it is free, or held the same way with
/// room for one more), and holds it.
pub fn hold(hold: Hold) -> Held {
    let mut holders = HOLDERS.lock().unwrap_or_else(|e| e.into_inner());
    while !(holders.count == 0 || (holders.hold == Some(hold) && holders.count < hold.room())) {
        holders = RELEASED.wait(holders).unwrap_or_else(|e| e.into_inner());
    }
    holders.hold = Some(hold);
    holders.count += 1;
    Held(hold)
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut holders = HOLDERS.lock().unwrap_or_else(|e| e.into_inner());
        holders.count -= 1;
        if holders.count == 0 {
            holders.hold = None;
        }
        RELEASED.notify_all();
    }
}
