/* Accessibility fixes of the book's theme (docs/accessibility.md; tools/build_book.py copies this
   file into the book's _static/, where Jupyter Book loads it on every page).

   WCAG 2.5.3 (label in name; axe-core's label-content-name-mismatch): the theme's search button
   shows "Search Ctrl+K" but is named "Search", and the colour-mode button's icons carry titles
   ("Light", "Dark", "System Settings") that its name, "Color mode", does not contain. The search
   button is named by its text instead; the icons become decoration (the button keeps its name).
   Font Awesome replaces the icons by SVGs after the page loads: each button is watched for that. */
(function () {
  function fix() {
    document.querySelectorAll('button.search-button-field[aria-label]').forEach(function (button) {
      button.removeAttribute('aria-label');
    });
    document.querySelectorAll('.theme-switch-button i[title], .theme-switch-button svg:not([aria-hidden="true"]), '
                              + '.theme-switch-button svg title').forEach(function (icon) {
      if (icon.tagName.toLowerCase() === 'title') {
        icon.remove();
        return;
      }
      icon.removeAttribute('title');
      icon.removeAttribute('aria-labelledby');
      icon.removeAttribute('role');
      icon.setAttribute('aria-hidden', 'true');
    });
  }
  function start() {
    fix();
    document.querySelectorAll('.theme-switch-button, button.search-button-field').forEach(function (button) {
      new MutationObserver(fix).observe(button, {childList: true, subtree: true});
    });
  }
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
})();
