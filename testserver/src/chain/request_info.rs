//! Stage 1, request info (kube-apiserver's `WithRequestInfo`): resolves what the path
//! addresses, once, for every later stage. A resolution error is kept, not answered:
//! the endpoint answers it, after authentication and authorization, as kube-apiserver
//! serves its 404s from the mux behind the filters.

use crate::{
    endpoints::{context::RequestContext, request_info},
    shared::Shared,
};

/// Fills in the request's route, unless a front already did.
pub(crate) fn resolve(shared: &Shared, cx: &mut RequestContext) {
    if cx.route.is_none() {
        cx.route = Some(request_info::resolve(
            &shared.engine,
            &cx.parts.method,
            &cx.parts.uri,
        ));
    }
}
