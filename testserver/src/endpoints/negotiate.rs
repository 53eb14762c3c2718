//! Content negotiation as kube-apiserver does it (apiserver
//! `pkg/endpoints/handlers/negotiation`): the request body's Content-Type, and the
//! response's media type and shape from Accept — JSON, YAML, protobuf or CBOR, and the
//! `as=Table` / `as=PartialObjectMetadata[List]` transformations (`g=meta.k8s.io`,
//! `v=v1|v1beta1`) of API Concepts "Receiving resources as Tables" and "Retrieving
//! metadata only".

use crate::errors::{ApiError, Reason};

/// An encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// `application/json`.
    Json,
    /// `application/yaml`.
    Yaml,
    /// `application/vnd.kubernetes.protobuf`.
    Protobuf,
    /// `application/cbor` (KEP-4222), `application/cbor-seq` for a watch stream.
    Cbor,
}

impl Encoding {
    /// The Content-Type of a reply in this encoding.
    pub fn content_type(self) -> &'static str {
        match self {
            Encoding::Json => "application/json",
            Encoding::Yaml => "application/yaml",
            Encoding::Protobuf => crate::protobuf::MEDIA_TYPE,
            Encoding::Cbor => super::cbor::MEDIA_TYPE,
        }
    }
}

/// What the reply carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// The object (or list) itself.
    Object,
    /// A `meta.k8s.io` Table of the given version (`v1` or `v1beta1`).
    Table(&'static str),
    /// `PartialObjectMetadata` (or `...List` for lists) of the given version.
    Metadata(&'static str),
}

/// The outcome of negotiation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    /// Encoding.
    pub encoding: Encoding,
    /// Shape.
    pub shape: Shape,
}

impl Negotiated {
    /// Plain JSON.
    pub const JSON: Negotiated = Negotiated {
        encoding: Encoding::Json,
        shape: Shape::Object,
    };
}

/// What the addressed resource can be served as.
#[derive(Debug, Clone, Copy)]
pub struct Offer {
    /// Protobuf is offered for the object itself (built-in kinds; custom resources are JSON
    /// and YAML only, as apiextensions-apiserver serves them).
    pub protobuf: bool,
    /// Tables and metadata transformations are offered (resource requests that read).
    pub transforms: bool,
    /// The request reads a list rather than one object (a watch's events are single
    /// objects).
    pub list: bool,
    /// The reply is a watch stream: `application/cbor-seq` is acceptable too.
    pub stream: bool,
}

struct Clause<'a> {
    base: &'a str,
    params: Vec<(&'a str, &'a str)>,
    q: f32,
}

fn clauses(accept: &str) -> Vec<Clause<'_>> {
    let mut out: Vec<Clause<'_>> = accept
        .split(',')
        .filter_map(|c| {
            let mut parts = c.split(';').map(str::trim);
            let base = parts.next().filter(|b| !b.is_empty())?;
            let mut params = Vec::new();
            let mut q = 1.0;
            for p in parts {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                if k == "q" {
                    q = v.parse().unwrap_or(0.0);
                } else {
                    params.push((k, v.trim_matches('"')));
                }
            }
            Some(Clause { base, params, q })
        })
        .collect();
    // Stable: equal weights keep the client's order.
    out.sort_by(|a, b| b.q.partial_cmp(&a.q).unwrap_or(std::cmp::Ordering::Equal));
    out
}

/// Whether `accept` lists `base` with every parameter of `params` (`("g",
/// "apidiscovery.k8s.io")`) at a weight above zero.
pub fn accepts(accept: &str, base: &str, params: &[(&str, &str)]) -> bool {
    clauses(accept)
        .iter()
        .any(|c| c.q > 0.0 && c.base == base && params.iter().all(|p| c.params.contains(p)))
}

fn version(v: &str) -> Option<&'static str> {
    match v {
        "v1" => Some("v1"),
        "v1beta1" => Some("v1beta1"),
        _ => None,
    }
}

/// Picks the reply's encoding and shape from an Accept header: the first acceptable clause
/// by weight, then order. 406 NotAcceptable when none is.
pub fn negotiate(accept: Option<&str>, offer: Offer) -> Result<Negotiated, ApiError> {
    let accept = accept.map(str::trim).filter(|a| !a.is_empty());
    let Some(accept) = accept else {
        return Ok(Negotiated::JSON);
    };
    for c in clauses(accept) {
        if c.q <= 0.0 {
            continue;
        }
        let encoding = match c.base {
            "application/json" | "application/*" | "*/*" => Encoding::Json,
            "application/yaml" => Encoding::Yaml,
            crate::protobuf::MEDIA_TYPE => Encoding::Protobuf,
            // Every kind, built-in or custom, has a CBOR form (KEP-4222: the serializer is
            // generic over unstructured objects).
            super::cbor::MEDIA_TYPE => Encoding::Cbor,
            super::cbor::SEQ_MEDIA_TYPE if offer.stream => Encoding::Cbor,
            _ => continue,
        };
        let get = |k: &str| c.params.iter().find(|(pk, _)| *pk == k).map(|(_, v)| *v);
        let shape = match get("as") {
            None => Shape::Object,
            Some(_) if !offer.transforms => continue,
            Some(kind) => {
                if get("g") != Some("meta.k8s.io") {
                    continue;
                }
                let Some(v) = get("v").and_then(version) else {
                    continue;
                };
                match kind {
                    // metav1.Table has no protobuf form (+protobuf=false).
                    "Table" if encoding == Encoding::Protobuf => continue,
                    "Table" => Shape::Table(v),
                    "PartialObjectMetadata" | "PartialObjectMetadataList" => {
                        if (kind == "PartialObjectMetadataList") != offer.list {
                            return Err(ApiError::new(
                                406,
                                Reason::NotAcceptable,
                                format!(
                                    "you requested {kind}, but the requested object is {}",
                                    if offer.list { "a list" } else { "not a list" }
                                ),
                            ));
                        }
                        Shape::Metadata(v)
                    }
                    _ => continue,
                }
            }
        };
        if encoding == Encoding::Protobuf && shape == Shape::Object && !offer.protobuf {
            continue;
        }
        return Ok(Negotiated { encoding, shape });
    }
    Err(ApiError::new(
        406,
        Reason::NotAcceptable,
        format!(
            "only the following media types are accepted: {}",
            if offer.protobuf {
                "application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor"
            } else {
                "application/json, application/yaml, application/cbor"
            }
        ),
    ))
}

/// The encoding of a request body, from its Content-Type (JSON when absent).
pub fn body_encoding(content_type: Option<&str>) -> Result<Encoding, ApiError> {
    let base = content_type
        .unwrap_or("application/json")
        .split(';')
        .next()
        .unwrap_or_default()
        .trim();
    match base {
        "application/json" | "" | "*/*" => Ok(Encoding::Json),
        "application/yaml" | "application/x-yaml" | "text/yaml" => Ok(Encoding::Yaml),
        crate::protobuf::MEDIA_TYPE => Ok(Encoding::Protobuf),
        super::cbor::MEDIA_TYPE => Ok(Encoding::Cbor),
        other => Err(ApiError::unsupported_media_type(format!(
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor (got {other:?})"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUILTIN_LIST: Offer = Offer {
        protobuf: true,
        transforms: true,
        list: true,
        stream: false,
    };
    const CR_GET: Offer = Offer {
        protobuf: false,
        transforms: true,
        list: false,
        stream: false,
    };

    fn pick(accept: &str, offer: Offer) -> Result<Negotiated, u16> {
        negotiate(Some(accept), offer).map_err(|e| e.code)
    }

    #[test]
    fn client_go_accept_headers() {
        // client-go with ContentType protobuf sends this Accept.
        let pb = "application/vnd.kubernetes.protobuf, */*";
        assert_eq!(
            pick(pb, BUILTIN_LIST).map(|n| n.encoding),
            Ok(Encoding::Protobuf)
        );
        assert_eq!(pick(pb, CR_GET).map(|n| n.encoding), Ok(Encoding::Json));
        assert_eq!(
            pick("application/vnd.kubernetes.protobuf", CR_GET),
            Err(406)
        );
        assert_eq!(pick("application/json", BUILTIN_LIST), Ok(Negotiated::JSON));
        assert_eq!(
            pick(
                "application/json;q=0.5, application/vnd.kubernetes.protobuf",
                BUILTIN_LIST
            )
            .map(|n| n.encoding),
            Ok(Encoding::Protobuf)
        );
        // kubectl get
        let table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(pick(table, CR_GET).map(|n| n.shape), Ok(Shape::Table("v1")));
        // the metadata client
        let meta = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
        assert_eq!(
            pick(meta, BUILTIN_LIST),
            Ok(Negotiated {
                encoding: Encoding::Protobuf,
                shape: Shape::Metadata("v1")
            })
        );
        assert_eq!(
            pick(
                "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
                CR_GET
            ),
            Err(406)
        );
        assert_eq!(pick("text/html", BUILTIN_LIST), Err(406));
    }

    #[test]
    fn cbor_for_every_kind_and_cbor_seq_for_streams_only() {
        // client-go with ContentType application/cbor (KEP-4222)
        let cbor = "application/cbor, application/json;q=0.9";
        for offer in [BUILTIN_LIST, CR_GET] {
            assert_eq!(pick(cbor, offer).map(|n| n.encoding), Ok(Encoding::Cbor));
        }
        let seq = "application/cbor-seq";
        assert_eq!(pick(seq, CR_GET), Err(406));
        let watch = Offer {
            stream: true,
            ..CR_GET
        };
        assert_eq!(pick(seq, watch).map(|n| n.encoding), Ok(Encoding::Cbor));
        assert_eq!(
            body_encoding(Some("application/cbor")).ok(),
            Some(Encoding::Cbor)
        );
        assert_eq!(
            body_encoding(Some("application/cbor-seq")).map_err(|e| e.code),
            Err(415)
        );
    }
}
