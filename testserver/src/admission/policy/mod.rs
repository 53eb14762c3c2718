//! ValidatingAdmissionPolicy and MutatingAdmissionPolicy (WIP).
#![allow(dead_code)]
mod expr;
