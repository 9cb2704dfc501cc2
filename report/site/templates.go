package site

import "html/template"

const style = `<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em;margin:0 0 .2em} h2{font-size:1.15em;margin:1.4em 0 .4em}
.meta{color:#555;margin:.1em 0}
table{border-collapse:collapse;margin:.5em 0}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right;white-space:nowrap}
th{background:#f2f2f2;cursor:pointer;position:sticky;top:0}
th.wl{background:#e4ebf5;text-align:center;cursor:default}
td.impl,th.impl{text-align:left;position:sticky;left:0;background:#fafafa}
td.cmd{text-align:left;white-space:normal;font-size:.9em}
td.bad{background:#fbe0e0;font-weight:bold} td.miss{color:#aaa}
.iv{display:block;color:#777;font-size:.85em}
.wrap{overflow-x:auto;max-width:100%}
a{color:#1a4f9c;text-decoration:none} a:hover{text-decoration:underline}
img{max-width:520px;margin:4px;border:1px solid #ddd}
</style>`

const sortScript = `<script>
document.querySelectorAll('table.sortable').forEach(function(t){
  var head=t.tHead.rows[t.tHead.rows.length-1];
  Array.prototype.forEach.call(head.cells,function(th,i){
    th.addEventListener('click',function(){
      var body=t.tBodies[0], rows=Array.prototype.slice.call(body.rows);
      var asc=th.dataset.dir!=='asc'; th.dataset.dir=asc?'asc':'desc';
      rows.sort(function(a,b){
        var x=a.cells[i].dataset.v, y=b.cells[i].dataset.v;
        if(x===undefined||y===undefined){x=a.cells[i].textContent;y=b.cells[i].textContent;return asc?x.localeCompare(y):y.localeCompare(x)}
        if(x==='') return 1; if(y==='') return -1;
        return asc?parseFloat(x)-parseFloat(y):parseFloat(y)-parseFloat(x);
      });
      rows.forEach(function(r){body.appendChild(r)});
    });
  });
});
</script>`

var indexTmpl = template.Must(template.New("index").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>lockbench suite {{.Bundle.Suite}} — {{.Bundle.Tier}}</title>` + style + `</head><body>
<h1>lockbench suite {{.Bundle.Suite}}, {{.Bundle.Tier}} tier</h1>
<p class="meta">{{.Bundle.Started.Format "2006-01-02 15:04 MST"}} · lockbench {{.Bundle.Lockbench}} · suite digest {{.Bundle.Digest}} · part {{.Bundle.Part}} · {{len .Bundle.Rows}} locks</p>
{{range .Fingerprint}}<p class="meta">{{.}}</p>{{end}}
<h2>The table</h2>
<p class="meta">A row per lock, a column per figure of each workload (at the client count under it). Click a heading to sort; a figure links to the report it came from, a lock to its page. An interval in brackets is the figure's over the workload's rounds; a red cell is a finding against the lock.</p>
<div class="wrap"><table class="sortable">
<thead><tr><th class="impl wl"></th>{{range .Groups}}<th class="wl" colspan="{{.Span}}">{{.Workload}}</th>{{end}}</tr>
<tr><th class="impl">lock</th>{{range .Columns}}<th title="{{if .Lower}}lower is better{{else}}higher is better{{end}}">{{.Name}}{{if eq .Clients 1}}<br>1 client{{else if gt .Clients 1}}<br>{{.Clients}} clients{{end}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr><td class="impl"><a href="{{.Page}}">{{.Impl}}</a></td>{{range .Cells}}<td data-v="{{.Sort}}"{{if .Bad}} class="bad"{{else if .Missing}} class="miss"{{end}}>{{if .Link}}<a href="{{.Link}}" title="{{.Title}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}{{if .Interval}}<span class="iv">{{.Interval}}</span>{{end}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
<h2>The workloads</h2>
<table><thead><tr><th class="impl">workload</th><th class="impl">question</th><th class="impl">command</th><th>exit</th><th>time</th></tr></thead><tbody>
{{range .Workloads}}<tr><td class="impl"><a href="{{.Report}}">{{.Run.Name}}</a></td><td class="impl">{{.Run.Question}}{{if .Note}}<br><b>{{.Note}}</b>{{end}}</td><td class="cmd"><code>lockbench {{.Run.Command}}{{range .Run.Args}} {{.}}{{end}}</code></td><td>{{.Run.Exit}}</td><td>{{printf "%.0f s" .Run.Seconds}}</td></tr>
{{end}}</tbody></table>
<p class="meta">Exit 3 is a workload that found a mutual-exclusion violation, 5 one that missed an SLO: results, not failures. Reproduce: <code>lockbench suite --suite {{.Bundle.Suite}} --tier {{.Bundle.Tier}}</code></p>
` + sortScript + `</body></html>
`))

var lockTmpl = template.Must(template.New("lock").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>{{.Impl}} — lockbench suite {{.Bundle.Suite}}</title>` + style + `</head><body>
<p><a href="../index.html">← the table</a></p>
<h1>{{.Impl}}</h1>
<p class="meta">suite {{.Bundle.Suite}}, {{.Bundle.Tier}} tier, {{.Bundle.Started.Format "2006-01-02 15:04 MST"}}</p>
{{range .Sections}}<h2>{{.Run.Name}}: {{.Run.Question}}</h2>
<p class="meta"><code>lockbench {{.Run.Command}}{{range .Run.Args}} {{.}}{{end}}</code> · <a href="{{.Report}}">the workload's report</a></p>
<table><thead><tr><th class="impl">figure</th><th>clients</th><th>value</th></tr></thead><tbody>
{{range .Figures}}<tr><td class="impl">{{.Name}}</td><td>{{if .Clients}}{{.Clients}}{{else}}every size{{end}}</td><td{{if .Cell.Bad}} class="bad"{{end}}><a href="{{.Cell.Link}}" title="{{.Cell.Title}}">{{.Cell.Text}}</a>{{if .Cell.Interval}}<span class="iv">{{.Cell.Interval}}</span>{{end}}</td></tr>
{{end}}</tbody></table>
{{range .Plots}}<a href="{{.}}"><img src="{{.}}" alt="{{.}}"></a>{{end}}
{{end}}</body></html>
`))
