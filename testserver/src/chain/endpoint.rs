//! The last stage: the endpoint (kube-apiserver's REST handlers behind the filters),
//! which decodes, admits (mutating, then validating), calls the registry and encodes;
//! see `crate::endpoints`.

use crate::{
    endpoints::{self, context::RequestContext, reply::Reply},
    errors::ApiResult,
    shared::Shared,
};

/// Serves the request with its verb's handler (or discovery and OpenAPI).
pub(crate) async fn serve(shared: &Shared, cx: &mut RequestContext) -> ApiResult<Reply> {
    endpoints::serve(shared, cx).await
}
