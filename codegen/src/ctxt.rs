//! Error accumulation (serde_derive's `Ctxt`): every problem found while reading markers
//! and validating the model is recorded with its span, and all of them are reported
//! together, so a user fixes ten mistakes in one compile instead of ten.

use std::cell::RefCell;
use std::fmt::Display;

use proc_macro2::Span;
use quote::ToTokens;

/// Collects spanned [`syn::Error`]s; [`Ctxt::check`] combines them into one.
#[derive(Debug, Default)]
pub struct Ctxt {
    errors: RefCell<Vec<syn::Error>>,
}

impl Ctxt {
    /// An empty context.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records an error spanning the tokens of `obj`.
    pub fn error_spanned_by<T: ToTokens, M: Display>(&self, obj: T, msg: M) {
        self.errors
            .borrow_mut()
            .push(syn::Error::new_spanned(obj.into_token_stream(), msg));
    }

    /// Records an error at `span`.
    pub fn error_at<M: Display>(&self, span: Span, msg: M) {
        self.errors.borrow_mut().push(syn::Error::new(span, msg));
    }

    /// Records an existing [`syn::Error`] (which may already combine several).
    pub fn syn_error(&self, err: syn::Error) {
        self.errors.borrow_mut().push(err);
    }

    /// Whether any error has been recorded so far.
    pub fn has_errors(&self) -> bool {
        !self.errors.borrow().is_empty()
    }

    /// Consumes the context: `Ok(())` when nothing was recorded, otherwise every error
    /// combined into one [`syn::Error`] (iterate it to get them back one by one).
    pub fn check(self) -> Result<(), syn::Error> {
        let mut errors = self.errors.into_inner().into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for err in errors {
            combined.combine(err);
        }
        Err(combined)
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
}
