//! Hearing of every call into plugin code before it is made.
//!
//! A crash inside a plugin (a segfault, an abort) cannot be caught in the
//! process it happens in. A process that runs a plugin on behalf of another
//! (the `anydev conformance` worker) installs a watcher that reports each
//! call as it starts, so its parent can say which call the plugin died in.

use std::sync::OnceLock;

/// Told the call's name (`"execute"`) and, for `execute`, the op's name.
pub type CallWatcher = fn(call: &'static str, op: Option<&'static str>);

static WATCHER: OnceLock<CallWatcher> = OnceLock::new();

/// Installs the process's call watcher; `false` when one was already set
/// (the first stays).
pub fn watch_calls(watcher: CallWatcher) -> bool {
    WATCHER.set(watcher).is_ok()
}

/// Tells the watcher, if any, that `call` (running the op of ABI code
/// `op_code`) is about to enter plugin code.
pub(super) fn entering(call: &'static str, op_code: Option<u32>) {
    if let Some(watcher) = WATCHER.get() {
        let op = op_code
            .and_then(anydev_ops::OpCode::from_code)
            .map(anydev_ops::OpCode::name);
        watcher(call, op);
    }
}
