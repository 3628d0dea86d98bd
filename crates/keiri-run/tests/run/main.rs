#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Integration tests of keiri-run: the engine and every builtin block.
mod ai;
mod catalog;
mod checkpoints;
mod columns;
mod control;
mod engine;
mod fused;
mod input;
mod integration;
mod jp;
mod limits;
mod matching;
mod output;
mod projection;
mod roll_forward;
mod support;
mod templates;
mod traced;
mod transforms;
mod ui;
mod untaken;
mod verify;
mod warnings;
mod zengin;
