// Draws every plot of a page: each <script type="application/json" class="plot"> holds a plotly
// figure built by the server (bot/dashboard/plots.py) for the element named in data-target.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("script.plot").forEach(function (node) {
    var target = document.getElementById(node.dataset.target);
    if (!target || typeof Plotly === "undefined") { return; }
    var fig = JSON.parse(node.textContent);
    Plotly.newPlot(target, fig.data, fig.layout, {displaylogo: false, responsive: true}).then(function () {
      target.dataset.rendered = "1";
    });
  });
});
