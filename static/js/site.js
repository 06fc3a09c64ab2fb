// site.js: behaviour shared by every page. Marks the current navigation link.
// A classic deferred script (the layout loads it without type=module).
{
  const here = location.pathname;
  document.querySelectorAll("header.site nav a").forEach((a) => {
    const p = a.getAttribute("href");
    if (here === p || (p !== "/" && here.indexOf(p + "/") === 0)) a.setAttribute("aria-current", "page");
  });
}
