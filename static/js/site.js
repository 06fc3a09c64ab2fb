// site.js: behaviour shared by every page. Marks the current navigation link.
(function () {
  "use strict";
  var here = location.pathname;
  document.querySelectorAll("header.site nav a").forEach(function (a) {
    var p = a.getAttribute("href");
    if (here === p || (p !== "/" && here.indexOf(p + "/") === 0)) a.setAttribute("aria-current", "page");
  });
})();
