//! The client's wire encoding: JSON, or CBOR when asked for (client-go's
//! `rest.ContentConfig.ContentType` and its `clientContentConfigProvider`).
//!
//! With [`ContentType::Cbor`] a client sends request bodies as `application/cbor`
//! (`application/apply-patch+cbor` for server-side apply; JSON and merge patches have no
//! CBOR form and stay JSON) and asks for `application/cbor, application/json;q=0.9`, so a
//! server (or a resource) without CBOR answers JSON; each response is decoded by its
//! `Content-Type`. A server that cannot read CBOR bodies answers 415 UnsupportedMediaType:
//! as client-go's `clientContentConfigProvider.UnsupportedMediaType` does, the client then
//! uses JSON for the rest of its life (every clone of it: they share the state). Where
//! client-go returns that 415 to the caller, kubegen sends the same request again in JSON
//! (the server refused it before doing anything), so the caller sees no error.

use std::sync::atomic::{AtomicBool, Ordering};

use http::HeaderValue;

use super::cbor::CBOR_MEDIA_TYPE;

/// The encoding a client writes request bodies in and asks responses in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ContentType {
    /// `application/json`, the default.
    #[default]
    Json,
    /// `application/cbor` (KEP-4222: served by kube-apiserver with its `CBORServingAndStorage`
    /// feature gate, client-go's `ClientsAllowCBOR`/`ClientsPreferCBOR`), falling back to
    /// JSON for good once the server answers a CBOR body with 415.
    Cbor,
}

impl ContentType {
    /// The media type of request bodies.
    pub fn media_type(self) -> &'static str {
        match self {
            ContentType::Json => "application/json",
            ContentType::Cbor => CBOR_MEDIA_TYPE,
        }
    }
}

/// The Accept header of a CBOR client: CBOR first, JSON where the server has no CBOR.
pub(crate) const CBOR_ACCEPT: HeaderValue =
    HeaderValue::from_static("application/cbor, application/json;q=0.9");

/// What a client uses now: its configured [`ContentType`], until a 415 turns CBOR off.
#[derive(Debug)]
pub(crate) struct ContentState {
    configured: ContentType,
    /// Set by the first 415 to a CBOR body; never cleared.
    fell_back: AtomicBool,
}

impl ContentState {
    pub(crate) fn new(configured: ContentType) -> Self {
        Self {
            configured,
            fell_back: AtomicBool::new(false),
        }
    }

    /// The encoding in use.
    pub(crate) fn current(&self) -> ContentType {
        match self.configured {
            ContentType::Cbor if !self.fell_back.load(Ordering::Relaxed) => ContentType::Cbor,
            _ => ContentType::Json,
        }
    }

    /// The server refused a CBOR body: JSON from now on. Whether this call turned CBOR off.
    pub(crate) fn unsupported_media_type(&self) -> bool {
        !self.fell_back.swap(true, Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_415_turns_cbor_off_for_good() {
        let state = ContentState::new(ContentType::Cbor);
        assert_eq!(state.current(), ContentType::Cbor);
        assert!(state.unsupported_media_type());
        assert!(!state.unsupported_media_type());
        assert_eq!(state.current(), ContentType::Json);
        assert_eq!(
            ContentState::new(ContentType::Json).current(),
            ContentType::Json
        );
    }
}
