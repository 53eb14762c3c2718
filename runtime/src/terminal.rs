//! Whether a binary's logs may carry colour: only when they go to a terminal and the user
//! has not asked for none (<https://no-color.org>: `NO_COLOR` set to anything non-empty).
//! A log piped to a file or another program gets plain text, never raw ANSI escapes.
//!
//! ```no_run
//! tracing_subscriber::fmt()
//!     .with_ansi(kubegen::terminal::color_enabled())
//!     .with_writer(std::io::stderr)
//!     .init();
//! ```

use std::ffi::OsStr;
use std::io::IsTerminal;

/// Whether logs written to stderr may be coloured: stderr is a terminal and `NO_COLOR`
/// is unset or empty.
pub fn color_enabled() -> bool {
    color_enabled_for(
        std::io::stderr().is_terminal(),
        std::env::var_os("NO_COLOR").as_deref(),
    )
}

/// [`color_enabled`]'s rule, for a given terminal state and `NO_COLOR` value.
pub fn color_enabled_for(is_terminal: bool, no_color: Option<&OsStr>) -> bool {
    is_terminal && no_color.is_none_or(OsStr::is_empty)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(color_enabled_for(true, None));
        assert!(color_enabled_for(true, Some(OsStr::new(""))));
        assert!(!color_enabled_for(true, Some(OsStr::new("1"))));
        assert!(!color_enabled_for(false, None));
    }
}
