//! The pieces every HTML page of bwscope shares (the run's report, the
//! fleet's): escaping, the style sheet and the sortable tables' script.

/// Escape text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + s.len() / 16);
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

pub const STYLE: &str = r#"
:root{--fg:#1d232a;--muted:#5b6570;--line:#d8dde3;--bg:#fff;--band:#f5f7f9;--accent:#1f77b4;--warn:#8a5300;--warnbg:#fff6e5}
*{box-sizing:border-box}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg);margin:0}
main{max-width:1200px;margin:0 auto;padding:24px}
section,h3{scroll-margin-top:48px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:32px 0 10px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:16px;margin:20px 0 8px}
.meta{color:var(--muted);margin:0 0 12px}
nav{position:sticky;top:0;background:var(--bg);border-bottom:1px solid var(--line);padding:8px 24px;z-index:2}
nav a{margin-right:16px;color:var(--accent);text-decoration:none}
ul.headline{list-style:none;padding:0;margin:0;display:flex;flex-wrap:wrap;gap:8px}
ul.headline li{background:var(--band);border:1px solid var(--line);border-radius:6px;padding:6px 10px;font-weight:600}
ul.warnings{background:var(--warnbg);color:var(--warn);border:1px solid #f0d9a8;border-radius:6px;padding:10px 10px 10px 30px}
figure.chart{margin:0 0 24px;border:1px solid var(--line);border-radius:6px;padding:8px;background:#fff}
figure.chart svg{width:100%;height:auto;display:block}
figure.chart figcaption{color:var(--muted);font-size:13px;margin-top:4px}
.tablewrap{overflow-x:auto;max-height:70vh;overflow-y:auto;border:1px solid var(--line);border-radius:6px}
table{border-collapse:collapse;font-size:13px;width:100%}
th,td{padding:4px 8px;border-bottom:1px solid var(--line);white-space:nowrap}
td.k{white-space:normal}
td.notes{white-space:normal;min-width:12em}
td.n{text-align:right;font-variant-numeric:tabular-nums}
table.view th{cursor:default}
h4{font-size:14px;margin:16px 0 6px}
p.lead,p.notes{color:var(--muted);font-size:13px;margin:6px 0}
th{background:var(--band);position:sticky;top:0;text-align:left;cursor:pointer;user-select:none}
th.sorted-asc::after{content:" ▲"}th.sorted-desc::after{content:" ▼"}
tr.skipped td,tr.error td{color:var(--muted)}
pre{background:var(--band);border:1px solid var(--line);border-radius:6px;padding:10px;overflow:auto;font-size:12px}
details summary{cursor:pointer;color:var(--accent)}
"#;

/// Sort a table by a clicked header: numeric when both cells parse as
/// numbers (sort keys live in `data-v`), text otherwise; click again to
/// reverse. Then the #selftest hook.
pub const SCRIPT: &str = r#"
(function(){
function key(td){var v=td.getAttribute('data-v');if(v===null)v=td.textContent;var n=parseFloat(v);return isNaN(n)||!/^-?[0-9.eE+-]+$/.test(v.trim())?{s:v}:{n:n};}
function cmp(a,b){if(a.n!==undefined&&b.n!==undefined)return a.n-b.n;if(a.n!==undefined)return -1;if(b.n!==undefined)return 1;return a.s<b.s?-1:a.s>b.s?1:0;}
function sortBy(th){var table=th.closest('table'),tb=table.tBodies[0],i=th.cellIndex;
var asc=!th.classList.contains('sorted-asc');
table.querySelectorAll('th').forEach(function(h){h.classList.remove('sorted-asc','sorted-desc');});
th.classList.add(asc?'sorted-asc':'sorted-desc');
var rows=Array.prototype.slice.call(tb.rows);
rows.sort(function(r1,r2){var c=cmp(key(r1.cells[i]),key(r2.cells[i]));return asc?c:-c;});
var f=document.createDocumentFragment();rows.forEach(function(r){f.appendChild(r);});tb.appendChild(f);}
document.querySelectorAll('table.sortable th').forEach(function(th){th.addEventListener('click',function(){sortBy(th);});});
document.body.setAttribute('data-charts',String(document.querySelectorAll('figure.chart svg').length));
var rt=document.querySelector('#records table');if(rt){document.body.setAttribute('data-records-fit',rt.offsetWidth+' '+rt.parentNode.clientWidth);}
if(location.hash==='#selftest'){
 var t=document.querySelector('table.sortable'),out='no table';
 if(t){var th=null;t.querySelectorAll('th').forEach(function(h){if(h.getAttribute('data-k')==='best')th=h;});
  if(!th)out='no best column';else{sortBy(th);sortBy(th);
   var v=Array.prototype.map.call(t.tBodies[0].rows,function(r){return parseFloat(r.cells[th.cellIndex].getAttribute('data-v'));}).filter(function(x){return !isNaN(x);});
   var ok=v.length>0;for(var j=1;j<v.length;j++)if(v[j-1]<v[j])ok=false;out=ok?'ok '+v.length+' rows':'not sorted';}}
 document.body.setAttribute('data-selftest',out);}
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
