//! PageRank of a link graph, for benchmarks that weigh what a crawl
//! fetched (the share of the web's PageRank its pages hold).
//!
//! [`Graph`] is any directed graph in compressed rows; [`pagerank`] is the
//! classic power iteration (damping 0.85 in the literature): a node with
//! no out-link (a 404, a page linking nowhere) spreads its rank over every
//! node. [`Expected::graph`] gives the graph of what a correct crawl of the
//! scale web fetches: a page links what it links, a redirect its target.
//!
//! ```
//! use testkit::scale::{Graph, pagerank};
//!
//! // 0 → 1, 1 → 2, 2 → 0 and 2 → 1: node 1 gets the most.
//! let mut g = Graph::default();
//! g.push_node([1]);
//! g.push_node([2]);
//! g.push_node([0, 1]);
//! let rank = pagerank(&g, 0.85);
//! assert!((rank.iter().sum::<f64>() - 1.0).abs() < 1e-9);
//! assert!(rank[1] > rank[0] && rank[1] > rank[2]);
//! ```

use super::{Expected, Node};

/// A directed graph: node `i`'s out-links are `links(i)`, node numbers
/// `0..len()`.
#[derive(Debug, Clone)]
pub struct Graph {
    offsets: Vec<usize>,
    targets: Vec<u32>,
}

impl Default for Graph {
    fn default() -> Graph {
        Graph {
            offsets: vec![0],
            targets: Vec::new(),
        }
    }
}

impl Graph {
    /// Appends a node (numbered `len()` before the call) linking `links`;
    /// a link may name a node not pushed yet. Repeated links count once.
    pub fn push_node(&mut self, links: impl IntoIterator<Item = u32>) {
        let start = self.targets.len();
        self.targets.extend(links);
        self.targets[start..].sort_unstable();
        let mut kept = start;
        for i in start..self.targets.len() {
            if i == start || self.targets[i] != self.targets[kept - 1] {
                self.targets[kept] = self.targets[i];
                kept += 1;
            }
        }
        self.targets.truncate(kept);
        self.offsets.push(kept);
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// True if it has no node.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The out-links of node `i`.
    pub fn links(&self, i: usize) -> &[u32] {
        &self.targets[self.offsets[i]..self.offsets[i + 1]]
    }

    /// The number of links.
    pub fn link_count(&self) -> usize {
        self.targets.len()
    }
}

/// The PageRank of every node of `graph` (summing to 1), with `damping`
/// the chance of following a link rather than jumping anywhere: power
/// iteration until the ranks change by less than 1e-10 in all (L1), at
/// most 200 rounds.
///
/// # Panics
/// If a link names a node the graph does not have.
pub fn pagerank(graph: &Graph, damping: f64) -> Vec<f64> {
    let n = graph.len();
    if n == 0 {
        return Vec::new();
    }
    assert!(
        graph.targets.iter().all(|&t| (t as usize) < n),
        "a link names a node the graph does not have"
    );
    let mut rank = vec![1.0 / n as f64; n];
    let mut next = vec![0.0; n];
    for _ in 0..200 {
        let mut dangling = 0.0;
        next.iter_mut().for_each(|x| *x = 0.0);
        for (i, &r) in rank.iter().enumerate() {
            let links = graph.links(i);
            if links.is_empty() {
                dangling += r;
            } else {
                let share = r / links.len() as f64;
                for &t in links {
                    next[t as usize] += share;
                }
            }
        }
        let base = (1.0 - damping) / n as f64 + damping * dangling / n as f64;
        let mut change = 0.0;
        for (x, old) in next.iter_mut().zip(&rank) {
            *x = base + damping * *x;
            change += (*x - old).abs();
        }
        std::mem::swap(&mut rank, &mut next);
        if change < 1e-10 {
            break;
        }
    }
    rank
}

impl Expected {
    /// The graph of what a correct crawl fetches, with its nodes in the
    /// graph's order (node order, see [`super::ScaleWeb::index`]): a page
    /// links the fetched URLs it links, a redirect its target; links to
    /// what is not fetched (robots.txt, out of scope) are left out.
    pub fn graph(&self) -> (Vec<Node>, Graph) {
        let web = self.web();
        let mut dense = vec![u32::MAX; web.node_count() as usize];
        let nodes: Vec<Node> = self.fetched().map(|(n, _)| n).collect();
        for (d, &node) in nodes.iter().enumerate() {
            let i = web.index(node).expect("fetched nodes are in the web");
            dense[i as usize] = d as u32;
        }
        let mut graph = Graph::default();
        for &node in &nodes {
            graph.push_node(
                web.outlinks(node)
                    .into_iter()
                    .filter_map(|to| web.index(to))
                    .map(|i| dense[i as usize])
                    .filter(|&d| d != u32::MAX),
            );
        }
        (nodes, graph)
    }
}
