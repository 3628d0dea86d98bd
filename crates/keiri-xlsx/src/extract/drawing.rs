//! Shapes, connectors, charts and SmartArt of one worksheet, read from its drawing part
//! (`xl/drawings/drawingN.xml`), the chart parts it refers to (`xl/charts/chartN.xml`) and the
//! diagram data parts (`xl/diagrams/dataN.xml`). Nothing here needs Excel: positions come from
//! the anchors and transforms, converted from EMU to points with the sheet's column widths and
//! row heights.
//!
//! A part that cannot be read (missing, not XML, too large) becomes a warning and the sheet's
//! other content is still returned; only the package itself failing is an error.

use std::collections::HashMap;

use crate::error::Error;
use crate::package::{self, Package, Rels};

use super::model::{Arrow, Chart, ChartSeries, Shape, ShapeItem, SmartArt, SmartArtNode};
use super::tree::{self, Node};
use super::{ExtractMode, Metrics};

const EMU_PER_POINT: f64 = 12_700.0;
/// Drawing objects read per sheet; a part with more is cut there with a warning.
const MAX_OBJECTS: usize = 10_000;
/// Group nesting followed; deeper groups are skipped.
const MAX_GROUP_DEPTH: usize = 32;
/// SmartArt tree depth followed.
const MAX_DIAGRAM_DEPTH: usize = 32;

/// What the drawing of one sheet holds.
#[derive(Default)]
pub(crate) struct SheetDrawing {
    pub shapes: Vec<ShapeItem>,
    pub charts: Vec<Chart>,
}

/// Maps a child's EMU coordinates to the sheet's: `sheet = scale * child + shift`, per axis.
#[derive(Clone, Copy)]
struct Transform {
    sx: f64,
    bx: f64,
    sy: f64,
    by: f64,
}

const IDENTITY: Transform = Transform {
    sx: 1.0,
    bx: 0.0,
    sy: 1.0,
    by: 0.0,
};

/// Position and size in EMU on the sheet, plus rotation and flips.
#[derive(Clone, Copy, Default)]
struct Geometry {
    x: Option<f64>,
    y: Option<f64>,
    cx: Option<f64>,
    cy: Option<f64>,
    rotation: Option<f64>,
    flip_h: bool,
    flip_v: bool,
}

fn points(emu: f64) -> i64 {
    (emu / EMU_PER_POINT).round() as i64
}

fn num(node: Option<&Node>, attr: &str) -> Option<f64> {
    node?
        .attr(attr)?
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
}

/// The `xfrm` of a shape, mapped through the groups around it.
fn xfrm_geometry(xfrm: Option<&Node>, tf: Transform) -> Geometry {
    let Some(xfrm) = xfrm else {
        return Geometry::default();
    };
    let off = xfrm.child("off");
    let ext = xfrm.child("ext");
    let x = num(off, "x").map(|v| tf.sx * v + tf.bx);
    let y = num(off, "y").map(|v| tf.sy * v + tf.by);
    let cx = num(ext, "cx").map(|v| (tf.sx * v).abs());
    let cy = num(ext, "cy").map(|v| (tf.sy * v).abs());
    Geometry {
        x,
        y,
        cx,
        cy,
        rotation: num(Some(xfrm), "rot").map(|r| r / 60_000.0),
        flip_h: matches!(xfrm.attr("flipH"), Some("1" | "true")),
        flip_v: matches!(xfrm.attr("flipV"), Some("1" | "true")),
    }
}

/// The anchor's placement in EMU: `(x, y, cx, cy)`.
fn anchor_geometry(anchor: &Node, metrics: &mut Metrics) -> Geometry {
    let marker = |m: Option<&Node>, metrics: &mut Metrics| -> Option<(f64, f64)> {
        let m = m?;
        let col: u32 = m.path_text(&["col"])?.trim().parse().ok()?;
        let row: u32 = m.path_text(&["row"])?.trim().parse().ok()?;
        let col_off: f64 = m
            .path_text(&["colOff"])
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0.0);
        let row_off: f64 = m
            .path_text(&["rowOff"])
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0.0);
        Some((
            metrics.column_offset(col) * EMU_PER_POINT + col_off,
            metrics.row_offset(row) * EMU_PER_POINT + row_off,
        ))
    };
    let ext = anchor.child("ext");
    match anchor.name.as_str() {
        "absoluteAnchor" => {
            let pos = anchor.child("pos");
            Geometry {
                x: num(pos, "x"),
                y: num(pos, "y"),
                cx: num(ext, "cx"),
                cy: num(ext, "cy"),
                ..Geometry::default()
            }
        }
        "oneCellAnchor" => {
            let from = marker(anchor.child("from"), metrics);
            Geometry {
                x: from.map(|p| p.0),
                y: from.map(|p| p.1),
                cx: num(ext, "cx"),
                cy: num(ext, "cy"),
                ..Geometry::default()
            }
        }
        _ => {
            let from = marker(anchor.child("from"), metrics);
            let to = marker(anchor.child("to"), metrics);
            match (from, to) {
                (Some(f), Some(t)) => Geometry {
                    x: Some(f.0),
                    y: Some(f.1),
                    cx: Some((t.0 - f.0).max(0.0)),
                    cy: Some((t.1 - f.1).max(0.0)),
                    ..Geometry::default()
                },
                _ => Geometry::default(),
            }
        }
    }
}

/// The transform's own size is used when it has one; otherwise the anchor's placement (charts
/// and SmartArt frames carry an all-zero transform).
fn merge(own: Geometry, anchor: Option<Geometry>) -> Geometry {
    let sized = own.cx.is_some_and(|v| v > 0.0) && own.cy.is_some_and(|v| v > 0.0);
    match anchor {
        Some(a) if !sized => Geometry {
            x: a.x.or(own.x),
            y: a.y.or(own.y),
            cx: a.cx,
            cy: a.cy,
            ..own
        },
        Some(a) => Geometry {
            x: own.x.or(a.x),
            y: own.y.or(a.y),
            ..own
        },
        None => own,
    }
}

/// The compass heading of a line drawn by `(dx, dy)` with y growing downwards (90° = S).
fn compass(dx: f64, dy: f64, rotation: Option<f64>) -> Option<&'static str> {
    if dx == 0.0 && dy == 0.0 {
        return None;
    }
    let angle = dy.atan2(dx).to_degrees() + rotation.unwrap_or(0.0);
    let angle = angle.rem_euclid(360.0);
    const DIRS: [&str; 8] = ["E", "SE", "S", "SW", "W", "NW", "N", "NE"];
    let index = (((angle + 22.5).rem_euclid(360.0)) / 45.0) as usize;
    DIRS.get(index % 8).copied()
}

/// ExStruct's label for a preset geometry: `AutoShape-Rectangle`, `TextBox-Rectangle`, …
fn shape_type(sp: &Node) -> Option<String> {
    let prst = sp.path(&["spPr", "prstGeom"])?.attr("prst")?;
    let label = match prst {
        "ellipse" => "Oval".to_string(),
        "rect" => "Rectangle".to_string(),
        "roundRect" => "RoundedRectangle".to_string(),
        "flowChartDecision" => "FlowchartDecision".to_string(),
        "flowChartProcess" => "FlowchartProcess".to_string(),
        "straightConnector1" => "StraightConnector1".to_string(),
        other => {
            let mut chars = other.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect(),
                None => return None,
            }
        }
    };
    let text_box = sp
        .path(&["nvSpPr", "cNvSpPr"])
        .and_then(|n| n.attr("txBox"))
        .is_some_and(|v| v == "1" || v == "true");
    Some(format!(
        "{}-{label}",
        if text_box { "TextBox" } else { "AutoShape" }
    ))
}

/// An object found in the drawing, before ids are given out.
enum Found {
    Shape {
        drawing_id: Option<u32>,
        shape: Shape,
    },
    Connector {
        arrow: Arrow,
        start: Option<u32>,
        end: Option<u32>,
    },
    SmartArt(SmartArt),
    Chart(Chart),
}

struct Reader<'a> {
    pkg: &'a Package,
    drawing_part: &'a str,
    rels: Option<Rels>,
    mode: ExtractMode,
    warnings: &'a mut Vec<String>,
    found: Vec<Found>,
}

impl Reader<'_> {
    fn rel_target(&self, id: &str) -> Option<String> {
        let rel = self.rels.as_ref()?.rels.iter().find(|r| r.id == id)?;
        (!rel.external).then(|| package::resolve_target(self.drawing_part, &rel.target))
    }

    fn read_part(&mut self, part: &str) -> Result<Option<Node>, Error> {
        match self.pkg.read_text(part) {
            Ok(Some(text)) => match tree::parse(&text) {
                Ok(node) => Ok(Some(node)),
                Err(e) => {
                    self.warnings.push(format!("{part} skipped: {e}"));
                    Ok(None)
                }
            },
            Ok(None) => {
                self.warnings
                    .push(format!("{part} is referred to but missing"));
                Ok(None)
            }
            Err(Error::Unreadable { reason, .. }) if !reason.contains("together") => {
                self.warnings.push(format!("{part} skipped: {reason}"));
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Reads one object (`sp`, `cxnSp`, `grpSp`, `graphicFrame`, `pic`) placed by `anchor`
    /// (top-level objects) or by the groups around it (`tf`).
    fn object(
        &mut self,
        node: &Node,
        anchor: Option<Geometry>,
        tf: Transform,
        depth: usize,
    ) -> Result<(), Error> {
        if self.found.len() >= MAX_OBJECTS {
            return Ok(());
        }
        match node.name.as_str() {
            "sp" => self.shape(node, anchor, tf),
            "cxnSp" => self.connector(node, anchor, tf),
            "grpSp" => {
                if depth >= MAX_GROUP_DEPTH {
                    self.warnings.push(format!(
                        "{}: groups nested deeper than {MAX_GROUP_DEPTH} were skipped",
                        self.drawing_part
                    ));
                    return Ok(());
                }
                let inner = group_transform(node, anchor, tf);
                for child in &node.children {
                    self.object(child, None, inner, depth + 1)?;
                }
            }
            "graphicFrame" => self.frame(node, anchor, tf)?,
            "AlternateContent" => {
                // Newer content comes in a Choice with a Fallback for older readers; read the
                // first branch that has an object.
                for branch in node.children.iter() {
                    if branch.children.iter().any(|c| is_object(&c.name)) {
                        for child in &branch.children {
                            self.object(child, anchor, tf, depth)?;
                        }
                        break;
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn shape(&mut self, sp: &Node, anchor: Option<Geometry>, tf: Transform) {
        let geometry = merge(xfrm_geometry(sp.path(&["spPr", "xfrm"]), tf), anchor);
        let text = sp
            .child("txBody")
            .map(|t| t.paragraph_text().trim().to_string())
            .unwrap_or_default();
        let c_nv_pr = sp.path(&["nvSpPr", "cNvPr"]);
        let drawing_id = c_nv_pr.and_then(|n| n.attr("id")?.parse().ok());
        let prst = sp
            .path(&["spPr", "prstGeom"])
            .and_then(|g| g.attr("prst"))
            .unwrap_or("");
        let verbose = self.mode == ExtractMode::Verbose;
        if prst == "line" || prst.contains("Connector") {
            // A plain line drawn as a shape is a relationship like a connector, without ends.
            self.found.push(Found::Connector {
                arrow: arrow(sp, geometry, text, verbose),
                start: None,
                end: None,
            });
            return;
        }
        if text.is_empty() && !verbose {
            return;
        }
        self.found.push(Found::Shape {
            drawing_id,
            shape: Shape {
                id: None,
                text,
                l: geometry.x.map_or(0, points),
                t: geometry.y.map_or(0, points),
                w: verbose.then(|| geometry.cx.map(points)).flatten(),
                h: verbose.then(|| geometry.cy.map(points)).flatten(),
                rotation: geometry.rotation.filter(|r| *r != 0.0),
                kind: "shape",
                shape_type: shape_type(sp),
            },
        });
    }

    fn connector(&mut self, cxn: &Node, anchor: Option<Geometry>, tf: Transform) {
        let geometry = merge(xfrm_geometry(cxn.path(&["spPr", "xfrm"]), tf), anchor);
        let props = cxn.path(&["nvCxnSpPr", "cNvCxnSpPr"]);
        let end_id = |name: &str| props?.child(name)?.attr("id")?.parse::<u32>().ok();
        let text = cxn
            .child("txBody")
            .map(|t| t.paragraph_text().trim().to_string())
            .unwrap_or_default();
        self.found.push(Found::Connector {
            arrow: arrow(cxn, geometry, text, self.mode == ExtractMode::Verbose),
            start: end_id("stCxn"),
            end: end_id("endCxn"),
        });
    }

    fn frame(
        &mut self,
        frame: &Node,
        anchor: Option<Geometry>,
        tf: Transform,
    ) -> Result<(), Error> {
        let geometry = merge(xfrm_geometry(frame.child("xfrm"), tf), anchor);
        let name = frame
            .path(&["nvGraphicFramePr", "cNvPr"])
            .and_then(|n| n.attr("name"))
            .unwrap_or("")
            .to_string();
        let Some(data) = frame.path(&["graphic", "graphicData"]) else {
            return Ok(());
        };
        if let Some(chart_ref) = data.child("chart") {
            let Some(part) = chart_ref.attr("id").and_then(|id| self.rel_target(id)) else {
                self.warnings.push(format!(
                    "{}: chart {name:?} has no chart part",
                    self.drawing_part
                ));
                return Ok(());
            };
            if let Some(root) = self.read_part(&part)? {
                self.found.push(Found::Chart(chart(&root, name, geometry)));
            }
        } else if let Some(rel_ids) = data.child("relIds") {
            let Some(part) = rel_ids.attr("dm").and_then(|id| self.rel_target(id)) else {
                self.warnings.push(format!(
                    "{}: SmartArt {name:?} has no data part",
                    self.drawing_part
                ));
                return Ok(());
            };
            let layout_part = rel_ids.attr("lo").and_then(|id| self.rel_target(id));
            if let Some(root) = self.read_part(&part)? {
                let layout_title = match layout_part {
                    Some(p) => self
                        .read_part(&p)?
                        .and_then(|l| l.child("title")?.attr("val").map(str::to_string))
                        .filter(|t| !t.is_empty()),
                    None => None,
                };
                let (layout, nodes) = diagram(&root, layout_title);
                let verbose = self.mode == ExtractMode::Verbose;
                self.found.push(Found::SmartArt(SmartArt {
                    id: None,
                    text: String::new(),
                    l: geometry.x.map_or(0, points),
                    t: geometry.y.map_or(0, points),
                    w: verbose.then(|| geometry.cx.map(points)).flatten(),
                    h: verbose.then(|| geometry.cy.map(points)).flatten(),
                    rotation: None,
                    kind: "smartart",
                    layout,
                    nodes,
                }));
            }
        }
        Ok(())
    }
}

fn is_object(name: &str) -> bool {
    matches!(name, "sp" | "cxnSp" | "grpSp" | "graphicFrame" | "pic")
}

fn arrow(node: &Node, g: Geometry, text: String, verbose: bool) -> Arrow {
    let line = node.path(&["spPr", "ln"]);
    let head = |name: &str| {
        line.and_then(|l| l.child(name))
            .map(|e| match e.attr("type") {
                None | Some("none") => 1,
                Some("triangle") => 2,
                Some("stealth") => 4,
                Some("diamond") => 5,
                Some("oval") => 6,
                Some("arrow") => 3,
                Some(_) => 2,
            })
    };
    let dx = g.cx.map(|w| if g.flip_h { -w } else { w });
    let dy = g.cy.map(|h| if g.flip_v { -h } else { h });
    Arrow {
        id: None,
        text,
        l: g.x.map_or(0, points),
        t: g.y.map_or(0, points),
        w: verbose.then(|| g.cx.map(points)).flatten(),
        h: verbose.then(|| g.cy.map(points)).flatten(),
        rotation: g.rotation.filter(|r| *r != 0.0),
        kind: "arrow",
        begin_arrow_style: head("headEnd"),
        end_arrow_style: head("tailEnd"),
        begin_id: None,
        end_id: None,
        direction: match (dx, dy) {
            (Some(dx), Some(dy)) => compass(dx, dy, g.rotation),
            _ => None,
        },
    }
}

/// The transform that maps a group's children to the sheet: the group's own `xfrm` places its
/// child coordinate space (`chOff`/`chExt`) at `off`/`ext`.
fn group_transform(group: &Node, anchor: Option<Geometry>, outer: Transform) -> Transform {
    let Some(xfrm) = group.path(&["grpSpPr", "xfrm"]) else {
        return outer;
    };
    let (ox, oy) = (
        num(xfrm.child("off"), "x").unwrap_or(0.0),
        num(xfrm.child("off"), "y").unwrap_or(0.0),
    );
    let (ex, ey) = (
        num(xfrm.child("ext"), "cx").unwrap_or(0.0),
        num(xfrm.child("ext"), "cy").unwrap_or(0.0),
    );
    let (cx, cy) = (
        num(xfrm.child("chOff"), "x").unwrap_or(ox),
        num(xfrm.child("chOff"), "y").unwrap_or(oy),
    );
    let (cex, cey) = (
        num(xfrm.child("chExt"), "cx").unwrap_or(ex),
        num(xfrm.child("chExt"), "cy").unwrap_or(ey),
    );
    let scale = |ext: f64, ch: f64| if ch > 0.0 && ext > 0.0 { ext / ch } else { 1.0 };
    let (sx, sy) = (scale(ex, cex), scale(ey, cey));
    // A top-level group without a usable transform is placed by its anchor.
    let (ox, oy) = match anchor {
        Some(a) if ex <= 0.0 || ey <= 0.0 => (a.x.unwrap_or(ox), a.y.unwrap_or(oy)),
        _ => (ox, oy),
    };
    Transform {
        sx: outer.sx * sx,
        bx: outer.sx * (ox - cx * sx) + outer.bx,
        sy: outer.sy * sy,
        by: outer.sy * (oy - cy * sy) + outer.by,
    }
}

fn chart_type_label(tag: &str, node: &Node) -> String {
    let horizontal = node
        .child("barDir")
        .and_then(|d| d.attr("val"))
        .is_some_and(|v| v == "bar");
    match tag {
        "barChart" => if horizontal { "Bar" } else { "Column" }.to_string(),
        "bar3DChart" => if horizontal { "Bar3D" } else { "Column3D" }.to_string(),
        "areaChart" => "Area".to_string(),
        "bubbleChart" => "Bubble".to_string(),
        "doughnutChart" => "Doughnut".to_string(),
        "lineChart" => "Line".to_string(),
        "ofPieChart" => "OfPie".to_string(),
        "pieChart" => "Pie".to_string(),
        "radarChart" => "Radar".to_string(),
        "scatterChart" => "Scatter".to_string(),
        "stockChart" => "Stock".to_string(),
        "surfaceChart" => "Surface".to_string(),
        other => {
            let base = other.strip_suffix("Chart").unwrap_or(other);
            let mut chars = base.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect(),
                None => "unknown".to_string(),
            }
        }
    }
}

/// The text of a chart title or axis title: rich text runs, else the cached reference text.
fn chart_text(title: Option<&Node>) -> Option<String> {
    let title = title?;
    let mut runs = Vec::new();
    title.descendants("t", &mut runs);
    title.descendants("v", &mut runs);
    let text: String = runs.iter().map(|n| n.text.trim()).collect();
    (!text.is_empty()).then_some(text)
}

fn chart(root: &Node, name: String, g: Geometry) -> Chart {
    let plot = root.path(&["chart", "plotArea"]);
    let groups: Vec<&Node> = plot
        .map(|p| {
            p.children
                .iter()
                .filter(|c| c.name.ends_with("Chart"))
                .collect()
        })
        .unwrap_or_default();
    let chart_type = groups
        .first()
        .map(|g| chart_type_label(&g.name, g))
        .unwrap_or_else(|| "unknown".to_string());
    let mut series = Vec::new();
    for group in &groups {
        for ser in group.children_named("ser") {
            let formula = |paths: &[&[&str]]| {
                paths
                    .iter()
                    .find_map(|p| ser.path_text(p))
                    .map(|t| t.trim().to_string())
            };
            let name_range = formula(&[&["tx", "strRef", "f"]]);
            let literal = ser
                .path(&["tx", "strRef", "strCache", "pt"])
                .and_then(|pt| pt.path_text(&["v"]))
                .or_else(|| ser.path_text(&["tx", "v"]))
                .map(str::to_string);
            series.push(ChartSeries {
                name: literal.or_else(|| name_range.clone()).unwrap_or_default(),
                name_range,
                x_range: formula(&[
                    &["xVal", "numRef", "f"],
                    &["xVal", "strRef", "f"],
                    &["cat", "numRef", "f"],
                    &["cat", "strRef", "f"],
                    &["cat", "multiLvlStrRef", "f"],
                ]),
                y_range: formula(&[
                    &["yVal", "numRef", "f"],
                    &["yVal", "strRef", "f"],
                    &["val", "numRef", "f"],
                ]),
            });
        }
    }
    let value_axes: Vec<&Node> = plot
        .map(|p| p.children_named("valAx").collect())
        .unwrap_or_default();
    let y_axis_title = value_axes
        .iter()
        .find_map(|a| chart_text(a.child("title")))
        .unwrap_or_default();
    let y_axis_range = value_axes
        .iter()
        .find_map(|a| {
            let scaling = a.child("scaling")?;
            Some(vec![
                num(scaling.child("min"), "val")?,
                num(scaling.child("max"), "val")?,
            ])
        })
        .unwrap_or_default();
    Chart {
        name,
        chart_type,
        title: chart_text(root.path(&["chart", "title"])),
        y_axis_title,
        y_axis_range,
        w: g.cx.map(points),
        h: g.cy.map(points),
        series,
        l: g.x.map_or(0, points),
        t: g.y.map_or(0, points),
        error: None,
    }
}

/// The layout name and node tree of a SmartArt data part: points of type `node` (the
/// default) and `asst`, linked by `parOf` connections (source = parent, ordered by `srcOrd`)
/// below the `doc` point.
fn diagram(root: &Node, layout_title: Option<String>) -> (String, Vec<SmartArtNode>) {
    let mut texts: HashMap<&str, String> = HashMap::new();
    let mut docs: Vec<&str> = Vec::new();
    let mut layout = None;
    if let Some(list) = root.child("ptLst") {
        for pt in list.children_named("pt") {
            let Some(id) = pt.attr("modelId") else {
                continue;
            };
            match pt.attr("type").unwrap_or("node") {
                "doc" => {
                    docs.push(id);
                    if layout.is_none() {
                        layout = pt
                            .child("prSet")
                            .and_then(|p| p.attr("loTypeId"))
                            .and_then(|t| t.rsplit('/').next())
                            .filter(|t| !t.is_empty())
                            .map(str::to_string);
                    }
                }
                "node" | "asst" => {
                    let text = pt
                        .child("t")
                        .map(|t| t.paragraph_text().trim().to_string())
                        .unwrap_or_default();
                    texts.insert(id, text);
                }
                _ => {}
            }
        }
    }
    let mut children: HashMap<&str, Vec<(i64, &str)>> = HashMap::new();
    if let Some(list) = root.child("cxnLst") {
        for cxn in list.children_named("cxn") {
            if cxn.attr("type").unwrap_or("parOf") != "parOf" {
                continue;
            }
            let (Some(src), Some(dest)) = (cxn.attr("srcId"), cxn.attr("destId")) else {
                continue;
            };
            let order = cxn.attr("srcOrd").and_then(|o| o.parse().ok()).unwrap_or(0);
            children.entry(src).or_default().push((order, dest));
        }
    }
    for list in children.values_mut() {
        list.sort_by_key(|(order, _)| *order);
    }
    fn build(
        id: &str,
        depth: usize,
        texts: &HashMap<&str, String>,
        children: &HashMap<&str, Vec<(i64, &str)>>,
    ) -> Vec<SmartArtNode> {
        if depth >= MAX_DIAGRAM_DEPTH {
            return Vec::new();
        }
        let Some(kids) = children.get(id) else {
            return Vec::new();
        };
        kids.iter()
            .filter_map(|(_, kid)| {
                let text = texts.get(kid)?;
                Some(SmartArtNode {
                    text: text.clone(),
                    kids: build(kid, depth + 1, texts, children),
                })
            })
            .collect()
    }
    let nodes = docs
        .iter()
        .flat_map(|d| build(d, 0, &texts, &children))
        .collect();
    let layout = layout_title
        .or(layout)
        .unwrap_or_else(|| "Unknown".to_string());
    (layout, nodes)
}

/// Reads the drawing part of one sheet.
pub(crate) fn read(
    pkg: &Package,
    drawing_part: &str,
    metrics: &mut Metrics,
    mode: ExtractMode,
    warnings: &mut Vec<String>,
) -> Result<SheetDrawing, Error> {
    let rels_part = package::rels_part_of(drawing_part);
    let rels = match pkg.read_text(&rels_part)? {
        Some(text) => match package::parse_rels(&pkg.display, &rels_part, text) {
            Ok(r) => Some(r),
            Err(e) => {
                warnings.push(format!("{rels_part} skipped: {e}"));
                None
            }
        },
        None => None,
    };
    let mut reader = Reader {
        pkg,
        drawing_part,
        rels,
        mode,
        warnings,
        found: Vec::new(),
    };
    let Some(root) = reader.read_part(drawing_part)? else {
        return Ok(SheetDrawing::default());
    };
    for anchor in &root.children {
        if !matches!(
            anchor.name.as_str(),
            "twoCellAnchor" | "oneCellAnchor" | "absoluteAnchor" | "AlternateContent"
        ) {
            continue;
        }
        // An anchor wrapped in mc:AlternateContent: read its first branch's anchors.
        let anchors: Vec<&Node> = if anchor.name == "AlternateContent" {
            anchor
                .children
                .iter()
                .find(|b| !b.children.is_empty())
                .map(|b| b.children.iter().collect())
                .unwrap_or_default()
        } else {
            vec![anchor]
        };
        for anchor in anchors {
            let placement = anchor_geometry(anchor, metrics);
            for object in anchor.children.iter().filter(|c| is_object(&c.name)) {
                reader.object(object, Some(placement), IDENTITY, 0)?;
            }
        }
    }
    if reader.found.len() >= MAX_OBJECTS {
        reader.warnings.push(format!(
            "{drawing_part}: only the first {MAX_OBJECTS} drawing objects were read"
        ));
    }
    Ok(number(reader.found))
}

/// Gives shapes and SmartArt their sequence numbers (1, 2, … in drawing order) and resolves the
/// connectors' ends from drawing ids to those numbers.
fn number(found: Vec<Found>) -> SheetDrawing {
    let mut out = SheetDrawing::default();
    let mut ids: HashMap<u32, u32> = HashMap::new();
    let mut next = 0u32;
    let mut connectors = Vec::new();
    for f in found {
        match f {
            Found::Shape {
                drawing_id,
                mut shape,
            } => {
                next += 1;
                shape.id = Some(next);
                if let Some(d) = drawing_id {
                    ids.entry(d).or_insert(next);
                }
                out.shapes.push(ShapeItem::Shape(shape));
            }
            Found::SmartArt(mut s) => {
                next += 1;
                s.id = Some(next);
                out.shapes.push(ShapeItem::SmartArt(s));
            }
            Found::Connector { arrow, start, end } => {
                connectors.push(out.shapes.len());
                out.shapes.push(ShapeItem::Arrow(arrow));
                // Ends are resolved once every shape has its number.
                if let Some(ShapeItem::Arrow(a)) = out.shapes.last_mut() {
                    a.begin_id = start;
                    a.end_id = end;
                }
            }
            Found::Chart(c) => out.charts.push(c),
        }
    }
    for i in connectors {
        if let Some(ShapeItem::Arrow(a)) = out.shapes.get_mut(i) {
            a.begin_id = a.begin_id.and_then(|d| ids.get(&d).copied());
            a.end_id = a.end_id.and_then(|d| ids.get(&d).copied());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compass_headings_follow_screen_coordinates() {
        assert_eq!(compass(10.0, 0.0, None), Some("E"));
        assert_eq!(compass(0.0, 10.0, None), Some("S"));
        assert_eq!(compass(-10.0, 0.0, None), Some("W"));
        assert_eq!(compass(0.0, -10.0, None), Some("N"));
        assert_eq!(compass(10.0, 10.0, None), Some("SE"));
        assert_eq!(compass(10.0, 0.0, Some(90.0)), Some("S"));
        assert_eq!(compass(0.0, 0.0, None), None);
    }

    #[test]
    fn group_children_are_mapped_to_the_sheet() {
        let group = tree::parse(
            r#"<grpSp><grpSpPr><xfrm><off x="1000" y="2000"/><ext cx="200" cy="200"/>
               <chOff x="0" y="0"/><chExt cx="100" cy="100"/></xfrm></grpSpPr></grpSp>"#,
        )
        .unwrap();
        let tf = group_transform(&group, None, IDENTITY);
        assert_eq!(tf.sx * 50.0 + tf.bx, 1100.0);
        assert_eq!(tf.sy * 50.0 + tf.by, 2100.0);
    }
}
