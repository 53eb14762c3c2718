//! Error accumulation (serde_derive's `Ctxt`): every problem found while reading markers
//! and validating the model is recorded with its span, and all of them are reported
//! together, so a user fixes ten mistakes in one compile instead of ten.
//!
//! A context must be consumed: [`Ctxt::check`] hands its errors back, and
//! [`Ctxt::discard`] drops them on purpose. Dropping a context any other way is a bug in
//! the generator (its errors would be lost and wrong code generated), so it panics, as
//! serde_derive's does: a derive then fails with "proc-macro derive panicked" and the CLI
//! exits with the message, instead of either quietly emitting code for invalid input.

use std::cell::RefCell;
use std::fmt::Display;

use proc_macro2::Span;
use quote::ToTokens;

/// Collects spanned [`syn::Error`]s; [`Ctxt::check`] combines them into one.
#[derive(Debug)]
pub struct Ctxt {
    /// `None` once consumed by [`Ctxt::check`] or [`Ctxt::discard`].
    errors: RefCell<Option<Vec<syn::Error>>>,
    /// Problems that do not stop generation (a recursive schema cut); the CLI prints
    /// them, the derive cannot (stable proc macros have no warnings).
    warnings: RefCell<Vec<syn::Error>>,
}

impl Default for Ctxt {
    fn default() -> Self {
        Self {
            errors: RefCell::new(Some(Vec::new())),
            warnings: RefCell::default(),
        }
    }
}

impl Ctxt {
    /// An empty context.
    pub fn new() -> Self {
        Self::default()
    }

    fn push(&self, err: syn::Error) {
        // A consumed context cannot be reached: `check` and `discard` take `self`.
        if let Some(errors) = self.errors.borrow_mut().as_mut() {
            errors.push(err);
        }
    }

    /// Records an error spanning the tokens of `obj`.
    pub fn error_spanned_by<T: ToTokens, M: Display>(&self, obj: T, msg: M) {
        self.push(syn::Error::new_spanned(obj.into_token_stream(), msg));
    }

    /// Records an error at `span`.
    pub fn error_at<M: Display>(&self, span: Span, msg: M) {
        self.push(syn::Error::new(span, msg));
    }

    /// Records a warning at `span`.
    pub fn warn_at<M: Display>(&self, span: Span, msg: M) {
        self.warnings.borrow_mut().push(syn::Error::new(span, msg));
    }

    /// Takes the warnings recorded so far.
    pub fn take_warnings(&self) -> Vec<syn::Error> {
        std::mem::take(&mut *self.warnings.borrow_mut())
    }

    /// Records an existing [`syn::Error`] (which may already combine several).
    pub fn syn_error(&self, err: syn::Error) {
        self.push(err);
    }

    /// Whether any error has been recorded so far.
    pub fn has_errors(&self) -> bool {
        self.errors.borrow().as_ref().is_some_and(|e| !e.is_empty())
    }

    /// Consumes the context: `Ok(())` when nothing was recorded, otherwise every error
    /// combined into one [`syn::Error`] (iterate it to get them back one by one).
    pub fn check(self) -> Result<(), syn::Error> {
        let mut errors = self.errors.take().unwrap_or_default().into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for err in errors {
            combined.combine(err);
        }
        Err(combined)
    }

    /// Consumes the context and drops its errors on purpose, for a second reading whose
    /// problems the first one already reported.
    pub fn discard(self) {
        self.errors.take();
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        // Never panic while unwinding: that would abort and hide the first panic.
        if !std::thread::panicking() && self.errors.get_mut().is_some() {
            panic!(
                "kubegen-codegen bug: a Ctxt was dropped without `check` (its errors were never reported)"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_combines_every_recorded_error_in_order() {
        let cx = Ctxt::new();
        cx.error_at(Span::call_site(), "first");
        cx.error_spanned_by(quote::quote!(a b), "second");
        assert!(cx.has_errors());
        let err = cx.check().unwrap_err();
        let messages: Vec<String> = err.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(messages, ["first", "second"]);
    }

    #[test]
    fn check_is_ok_without_errors() {
        assert!(Ctxt::new().check().is_ok());
    }

    #[test]
    #[should_panic(expected = "a Ctxt was dropped without `check`")]
    fn dropping_an_unchecked_context_with_errors_panics() {
        let cx = Ctxt::new();
        cx.error_at(Span::call_site(), "lost");
        drop(cx);
    }

    #[test]
    #[should_panic(expected = "a Ctxt was dropped without `check`")]
    fn dropping_an_unchecked_empty_context_panics() {
        // Whether errors were recorded depends on the input; forgetting `check` is a bug
        // either way, so the empty case fails too (and the bug shows on valid input).
        drop(Ctxt::new());
    }

    #[test]
    fn discarded_and_checked_contexts_drop_quietly() {
        let cx = Ctxt::new();
        cx.error_at(Span::call_site(), "reported elsewhere");
        cx.discard();
        let cx = Ctxt::new();
        cx.error_at(Span::call_site(), "reported");
        assert!(cx.check().is_err());
    }

    #[test]
    fn a_panic_elsewhere_is_not_turned_into_an_abort() {
        // Unwinding through a live context must not panic again (a double panic aborts
        // the process): the original panic is the one reported.
        let result = std::panic::catch_unwind(|| {
            let cx = Ctxt::new();
            cx.error_at(Span::call_site(), "pending");
            panic!("original");
        });
        let payload = result.unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"original"));
    }
}
